// Creates the platform's topics idempotently: missing topics are created,
// existing ones get their cleanup policy and retention corrected; a topic is
// never deleted, shrunk or grown here.
// (ConfigResourceTypes is not a named ESM export of kafkajs under plain Node, hence the default import.)
import kafkajs, { type Admin } from 'kafkajs';
import { prefixed, type TopicDefinition } from './topic-definition.ts';
import type { Logger } from '../logger.ts';

function topicConfig(def: TopicDefinition): { name: string; value: string }[] {
  const entries: { name: string; value: string }[] = [{ name: 'cleanup.policy', value: def.cleanupPolicy }];
  if (def.retentionMs !== undefined) entries.push({ name: 'retention.ms', value: String(def.retentionMs) });
  if (def.maxMessageBytes !== undefined) entries.push({ name: 'max.message.bytes', value: String(def.maxMessageBytes) });
  return entries;
}

/**
 * For a moment after creating a topic, a busy broker answers metadata requests for it with
 * UNKNOWN_TOPIC_OR_PARTITION or LEADER_NOT_AVAILABLE; kafkajs's own waitForLeaders gives up on
 * the first, failing a start that would have succeeded a few milliseconds later.
 */
const NOT_YET = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'LEADER_NOT_AVAILABLE']);

async function waitForLeaders(admin: Admin, topics: string[], timeoutMs = 30_000): Promise<void> {
  for (const end = Date.now() + timeoutMs; ; ) {
    try {
      const meta = await admin.fetchTopicMetadata({ topics });
      if (meta.topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))) return;
    } catch (err) {
      const { type, originalError } = err as { type?: string; originalError?: { type?: string } };
      if (!NOT_YET.has(type ?? originalError?.type ?? '')) throw err;
    }
    if (Date.now() > end) throw new Error(`new topics still without a leader after ${timeoutMs} ms: ${topics.join(', ')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function ensureTopics(admin: Admin, prefix: string, defs: readonly TopicDefinition[], log: Logger): Promise<void> {
  const existing = new Set(await admin.listTopics());
  const missing = defs.filter((d) => !existing.has(prefixed(prefix, d.name)));
  if (missing.length > 0) {
    await admin.createTopics({
      waitForLeaders: false, // waited for below
      topics: missing.map((d) => ({
        topic: prefixed(prefix, d.name),
        numPartitions: d.partitions,
        replicationFactor: -1,
        configEntries: topicConfig(d),
      })),
    });
    await waitForLeaders(admin, missing.map((d) => prefixed(prefix, d.name)));
    log.info({ topics: missing.map((d) => prefixed(prefix, d.name)) }, 'topics created');
  }
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
