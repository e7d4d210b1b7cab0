// Creates the platform's topics idempotently: missing topics are created,
// existing ones get more partitions or their cleanup policy corrected; a topic
// is never deleted or shrunk here.
// (ConfigResourceTypes is not a named ESM export of kafkajs under plain Node, hence the default import.)
import kafkajs, { type Admin } from 'kafkajs';
import { prefixed, type TopicDefinition } from '../../../topics/index.ts';
import type { Logger } from '../logger.ts';

function topicConfig(def: TopicDefinition): { name: string; value: string }[] {
  const entries: { name: string; value: string }[] = [{ name: 'cleanup.policy', value: def.cleanupPolicy }];
  if (def.retentionMs !== undefined) entries.push({ name: 'retention.ms', value: String(def.retentionMs) });
  return entries;
}

export async function ensureTopics(admin: Admin, prefix: string, defs: readonly TopicDefinition[], log: Logger): Promise<void> {
  const existing = new Set(await admin.listTopics());
  const missing = defs.filter((d) => !existing.has(prefixed(prefix, d.name)));
  if (missing.length > 0) {
    await admin.createTopics({
      waitForLeaders: true,
      topics: missing.map((d) => ({
        topic: prefixed(prefix, d.name),
        numPartitions: d.partitions,
        replicationFactor: -1,
        configEntries: topicConfig(d),
      })),
    });
    log.info({ topics: missing.map((d) => prefixed(prefix, d.name)) }, 'topics created');
  }
  const present = defs.filter((d) => existing.has(prefixed(prefix, d.name)));
  if (present.length === 0) return;
  const meta = await admin.fetchTopicMetadata({ topics: present.map((d) => prefixed(prefix, d.name)) });
  const grow = present.filter((d) => {
    const found = meta.topics.find((t) => t.name === prefixed(prefix, d.name));
    return found !== undefined && found.partitions.length < d.partitions;
  });
  if (grow.length > 0) {
    await admin.createPartitions({ topicPartitions: grow.map((d) => ({ topic: prefixed(prefix, d.name), count: d.partitions })) });
    log.info({ topics: grow.map((d) => d.name) }, 'topic partitions increased');
  }
  await admin.alterConfigs({
    validateOnly: false,
    resources: present.map((d) => ({ type: kafkajs.ConfigResourceTypes.TOPIC, name: prefixed(prefix, d.name), configEntries: topicConfig(d) })),
  });
}
