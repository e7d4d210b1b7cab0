// Creates the platform's topics idempotently: missing topics are created,
// existing ones get their cleanup policy and retention corrected; a topic is
// never deleted, shrunk or grown here.
// (ConfigResourceTypes is not a named ESM export of kafkajs under plain Node, hence the default import.)
import kafkajs, { type Admin, type KafkaConfig } from 'kafkajs';
import { topicsAsKnownBy } from './broker-metadata.ts';
import { prefixed, type TopicDefinition } from './topic-definition.ts';
import type { Logger } from '../logger.ts';

function topicConfig(def: TopicDefinition): { name: string; value: string }[] {
  const entries: { name: string; value: string }[] = [{ name: 'cleanup.policy', value: def.cleanupPolicy }];
  if (def.retentionMs !== undefined) entries.push({ name: 'retention.ms', value: String(def.retentionMs) });
  if (def.maxMessageBytes !== undefined) entries.push({ name: 'max.message.bytes', value: String(def.maxMessageBytes) });
  return entries;
}

/**
 * Waits until every broker of the cluster knows these topics and a leader for each partition. Kafka
 * confirms a new topic once its controllers have it; each broker learns of it a moment later (on a
 * busy three-node cluster, often after the creating process went on), and until then answers
 * UNKNOWN_TOPIC_OR_PARTITION, which kafkajs's metadata refresh does not retry: a subscribe, a send
 * or a metadata request that reached such a broker failed (an ingress died of it at start). The
 * topics another process has just created are waited for too. A broker that does not answer (down,
 * or hung until the cluster fences it) is asked again.
 */
async function waitUntilEveryBrokerKnows(admin: Admin, topics: string[], security: Pick<KafkaConfig, 'ssl' | 'sasl'>, timeoutMs = 30_000): Promise<void> {
  for (const end = Date.now() + timeoutMs; ; ) {
    const { brokers } = await admin.describeCluster();
    const answers = await Promise.all(
      brokers.map(async ({ nodeId, host, port }) => {
        try {
          const known = await topicsAsKnownBy(host, port, topics, 5000, security);
          const missing = known.filter((t) => t.errorCode !== 0 || t.leaders.length === 0 || t.leaders.some((l) => l < 0));
          return missing.map((t) => `${t.name} (broker ${nodeId}: ${t.errorCode !== 0 ? `error ${t.errorCode}` : 'no leader'})`);
        } catch (err) {
          return [`broker ${nodeId}: ${(err as Error).message}`];
        }
      }),
    );
    const waiting = answers.flat();
    if (waiting.length === 0) return;
    if (Date.now() > end) throw new Error(`topics not yet known to every broker after ${timeoutMs} ms: ${waiting.join(', ')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** `security`: the TLS and SASL options of the cluster's clients (kafkaSecurity), for the brokers asked one by one. */
export async function ensureTopics(admin: Admin, prefix: string, defs: readonly TopicDefinition[], log: Logger, security: Pick<KafkaConfig, 'ssl' | 'sasl'> = {}): Promise<void> {
  const existing = new Set(await admin.listTopics());
  const missing = defs.filter((d) => !existing.has(prefixed(prefix, d.name)));
  if (missing.length > 0) {
    await admin.createTopics({
      waitForLeaders: false, // every broker is waited for below
      topics: missing.map((d) => ({
        topic: prefixed(prefix, d.name),
        numPartitions: d.partitions,
        replicationFactor: -1,
        configEntries: topicConfig(d),
      })),
    });
    log.info({ topics: missing.map((d) => prefixed(prefix, d.name)) }, 'topics created');
  }
  await waitUntilEveryBrokerKnows(admin, defs.map((d) => prefixed(prefix, d.name)), security);
  const present = defs.filter((d) => existing.has(prefixed(prefix, d.name)));
  if (present.length === 0) return;
  const meta = await admin.fetchTopicMetadata({ topics: present.map((d) => prefixed(prefix, d.name)) });
  for (const d of present) {
    const found = meta.topics.find((t) => t.name === prefixed(prefix, d.name));
    // Not grown automatically: more partitions move keys to other partitions, which breaks
    // per-key order (actors) and compaction; that is an operator's decision.
    if (found && found.partitions.length < d.partitions) {
      log.warn({ topic: d.name, has: found.partitions.length, wants: d.partitions }, 'topic has fewer partitions than its definition; grow it deliberately');
    }
  }
  // Correct our settings where they drifted, keeping any other per-topic setting an operator made
  // (alterConfigs replaces the whole set, so the current overrides are carried over).
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: present.map((d) => ({ type: kafkajs.ConfigResourceTypes.TOPIC, name: prefixed(prefix, d.name) })),
  });
  const changes = present.flatMap((d) => {
    const resource = described.resources.find((r) => r.resourceName === prefixed(prefix, d.name));
    const overrides = new Map((resource?.configEntries ?? []).filter((e) => e.configSource === kafkajs.ConfigSource.TOPIC_CONFIG).map((e) => [e.configName, e.configValue]));
    const wanted = topicConfig(d);
    if (wanted.every((w) => overrides.get(w.name) === w.value)) return [];
    for (const w of wanted) overrides.set(w.name, w.value);
    return [{ type: kafkajs.ConfigResourceTypes.TOPIC, name: prefixed(prefix, d.name), configEntries: [...overrides].map(([name, value]) => ({ name, value })) }];
  });
  if (changes.length > 0) {
    await admin.alterConfigs({ validateOnly: false, resources: changes });
    log.info({ topics: changes.map((c) => c.name) }, 'topic settings corrected');
  }
}
