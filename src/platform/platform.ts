// The platform a process stands on: configuration, logging, clients of every
// store, migrations, topics and schemas, and an ordered shutdown. Ingress and
// worker processes both start here.
import type { Admin, Kafka, Producer } from 'kafkajs';
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { deadLettersTopic } from './actors/dead-letters-topic.ts';
import type { TopicDefinition } from './kafka/topic-definition.ts';
import { createClickHouse, type ClickHouse } from './clickhouse/client.ts';
import type { Config } from './config.ts';
import { dependencyChecks, type Check } from './health.ts';
import { createKafka } from './kafka/client.ts';
import { createProducer } from './kafka/producer.ts';
import { Publisher } from './kafka/publisher.ts';
import { ensureTopics } from './kafka/topics.ts';
import { kafkaSecurity } from './kafka/security.ts';
import { createLogger, type Logger } from './logger.ts';
import { migrateAll } from './migrations.ts';
import { createPool, type Pool } from './postgres/pool.ts';
import { createRedis, type Redis } from './redis.ts';
import { registryConnection } from './registry/registry-connection.ts';
import { createSchemaRegistry } from './registry/schema-registry.ts';
import type { SealedColumn } from './secrets/sealed-columns.ts';
import { SealedSecrets } from './secrets/sealed-secrets.ts';
import { DEVELOPMENT_KEY_ID, secretsKeysOf } from './secrets/secrets-keys.ts';
import { Shutdown } from './shutdown.ts';
import { checkConnections } from './start-up-checks.ts';

/** `C`: the process's whole configuration (the platform's settings and its products'). */
export interface Platform<C extends Config = Config> {
  config: C;
  log: Logger;
  pg: Pool;
  clickhouse: ClickHouse;
  kafka: Kafka;
  kafkaAdmin: Admin;
  producer: Producer;
  registry: SchemaRegistry;
  publisher: Publisher;
  redis: Redis;
  /** Seals and opens the secrets products store (SECRETS_KEYS). */
  secrets: SealedSecrets;
  shutdown: Shutdown;
  checks: Check[];
}

export interface StartOptions {
  /** Process name for logs (ingress, workers, …). */
  name: string;
  /** The products' topics, handed over by the entry point; created and registered at start, with the platform's dead-letters topic. */
  topics: readonly TopicDefinition[];
  /** Run Postgres and ClickHouse migrations (every process does by default, under one lock: migrations.ts). */
  migrate?: boolean;
  /** The products' sealed columns, handed over by the entry point: the migrations seal their clear values (migrations.ts). */
  sealed?: readonly SealedColumn[];
}

export async function startPlatform<C extends Config>(config: C, options: StartOptions): Promise<Platform<C>> {
  const log = createLogger(config, options.name);
  const shutdown = new Shutdown(log, config.SHUTDOWN_TIMEOUT_MS);
  const topics = [deadLettersTopic, ...options.topics.filter((t) => t.name !== deadLettersTopic.name)];
  const secrets = new SealedSecrets(secretsKeysOf(config));
  if (secrets.currentKeyId === DEVELOPMENT_KEY_ID) {
    log.warn({ NODE_ENV: config.NODE_ENV }, `SECRETS_KEYS is not set and NODE_ENV is ${config.NODE_ENV}: stored secrets are sealed with the public development key, which is no secret (run.sh sets a key of this machine; any NODE_ENV but development and test refuses to start without one)`);
  }

  // Settings that a service refuses (a password, a certificate, TLS) stop start-up here (StartUpError).
  await checkConnections(config);

  if (options.migrate !== false) {
    await migrateAll(config, log, options.sealed);
  }

  const pg = createPool(config);
  shutdown.add('postgres', () => pg.end());
  const clickhouse = createClickHouse(config, config.CLICKHOUSE_DATABASE, undefined, log);
  shutdown.add('clickhouse', () => clickhouse.close());
  const redis = createRedis(config, log);
  await redis.connect();
  shutdown.add('redis', () => redis.quit());

  const kafka = createKafka(config, log);
  const kafkaAdmin = kafka.admin();
  await kafkaAdmin.connect();
  shutdown.add('kafka-admin', () => kafkaAdmin.disconnect());
  await ensureTopics(kafkaAdmin, config.TOPIC_PREFIX, topics, log, kafkaSecurity(config));

  const registry = createSchemaRegistry(config);
  const producer = createProducer(kafka);
  await producer.connect();
  // Registered after the stores, so it closes before them: pending sends flush first.
  shutdown.add('kafka-producer', () => producer.disconnect());
  const publisher = new Publisher(producer, registry, config.TOPIC_PREFIX);
  await publisher.register(topics);

  const checks = dependencyChecks({ kafkaAdmin, registry: registryConnection(config), clickhouse, pg, redis });
  // A part that cannot go on (shutdown.fail: e.g. a consumer kafkajs will not restart) makes the process not ready.
  checks.push({
    name: 'process',
    run: async () => {
      if (shutdown.failure) throw new Error(`${shutdown.failure.component} stopped: ${shutdown.failure.error}`);
    },
  });
  return { config, log, pg, clickhouse, kafka, kafkaAdmin, producer, registry, publisher, redis, secrets, shutdown, checks };
}
