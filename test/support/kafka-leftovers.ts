// The Kafka topics, consumer groups and schema-registry subjects that a test or
// benchmark run makes under its topic prefix: deleted when the run ends, and
// listed to prove that nothing was left in the shared broker and registry.
import { Kafka, logLevel } from 'kafkajs';
import type { Config } from '../../src/platform/config.ts';
import { kafkaSecurity, type KafkaSecuritySettings } from '../../src/platform/kafka/security.ts';
import { registryConnection, registryRequest, type RegistrySettings } from '../../src/platform/registry/registry-connection.ts';

/** The broker and registry as the service reaches them (TLS and authentication too): a run's configuration. */
export type SharedServices = Pick<Config, 'KAFKA_BROKERS'> & Partial<KafkaSecuritySettings> & RegistrySettings;

const adminOf = (services: SharedServices) => new Kafka({ brokers: services.KAFKA_BROKERS.split(','), ...kafkaSecurity(services), logLevel: logLevel.NOTHING }).admin();

/** Picks the names (topic, group or subject) a run owns. */
export type Owned = (name: string) => boolean;

/** Everything named `<prefix>` or `<prefix>.…`: topics, groups and `<topic>-value` subjects of that prefix. */
export const underPrefix =
  (prefix: string): Owned =>
  (name) =>
    name === prefix || name.startsWith(`${prefix}.`);

/** A group that still has members (one of a process killed moments ago) cannot be deleted until its session ends. */
const GROUP_RETRY_MS = 45_000;

/** How long a deleted topic may still be listed. */
const TOPIC_FORGET_MS = 30_000;

/** Deletes the owned topics and consumer groups, then the owned subjects: soft, then permanently. */
export async function deleteOwned(services: SharedServices, owned: Owned): Promise<void> {
  const admin = adminOf(services);
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter(owned);
    if (topics.length > 0) {
      await admin.deleteTopics({ topics, timeout: 30_000 });
      // Kafka confirms a delete once its controller has it; the brokers' metadata forgets the topics a
      // moment later, and until then they are still listed.
      const end = Date.now() + TOPIC_FORGET_MS;
      while ((await admin.listTopics()).some((t) => topics.includes(t)) && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
    }
    const end = Date.now() + GROUP_RETRY_MS;
    for (;;) {
      const groups = (await admin.listGroups()).groups.map((g) => g.groupId).filter(owned);
      if (groups.length === 0) break;
      try {
        await admin.deleteGroups(groups);
        break;
      } catch {
        if (Date.now() > end) break; // left for ownedLeftovers to report
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  } finally {
    await admin.disconnect();
  }
  // The registry deletes a subject permanently only once it is soft-deleted; the list also holds
  // subjects a stopped run left soft-deleted, for which the first DELETE is a harmless 404.
  const registry = registryConnection(services);
  for (const subject of (await subjects(services)).filter(owned)) {
    const path = `/subjects/${encodeURIComponent(subject)}`;
    await registryRequest(registry, 'DELETE', path);
    await registryRequest(registry, 'DELETE', `${path}?permanent=true`);
  }
  registry.agent.destroy();
}

/** What is still there of the owned: topics, groups, and subjects (soft-deleted ones too), each named with its kind. */
export async function ownedLeftovers(services: SharedServices, owned: Owned): Promise<string[]> {
  const admin = adminOf(services);
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter(owned).map((t) => `topic ${t}`);
    const groups = (await admin.listGroups()).groups.map((g) => g.groupId).filter(owned).map((g) => `consumer group ${g}`);
    const registered = (await subjects(services)).filter(owned).map((s) => `registry subject ${s}`);
    return [...topics, ...groups, ...registered];
  } finally {
    await admin.disconnect();
  }
}

/**
 * Every subject of the registry, soft-deleted ones too. Apicurio's Confluent-compatible `GET /subjects`
 * answers at most 1,000 (Apicurio/apicurio-registry#3118) and takes no paging, and a run beside
 * run.sh and other runs passes that: its own native search pages through them (subjects are the
 * artifacts of the group "default"; a soft-deleted one is still an artifact).
 */
async function subjects(services: RegistrySettings): Promise<string[]> {
  const registry = registryConnection(services);
  const search = `${new URL(services.SCHEMA_REGISTRY_URL).origin}/apis/registry/v3/search/artifacts`;
  const names: string[] = [];
  try {
    for (let offset = 0; ; offset += PAGE) {
      const res = await registryRequest(registry, 'GET', new URL(`${search}?groupId=default&offset=${offset}&limit=${PAGE}&orderby=createdOn&order=asc`));
      if (res.status !== 200) throw new Error(`registry: search answered ${res.status}`);
      const { artifacts, count } = JSON.parse(res.body) as { artifacts: { artifactId: string }[]; count: number };
      names.push(...artifacts.map((a) => a.artifactId));
      if (artifacts.length < PAGE || offset + PAGE >= count) return names;
    }
  } finally {
    registry.agent.destroy();
  }
}

const PAGE = 500;
