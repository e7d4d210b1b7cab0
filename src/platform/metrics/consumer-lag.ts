// How far a consumer group is behind: per partition, the topic's end offset less
// the group's committed offset (less the first offset kept, when the group has
// committed nothing yet). Read from the broker when asked (a scrape, /readyz).
import type { Admin } from 'kafkajs';

export interface PartitionLag {
  group: string;
  topic: string;
  partition: number;
  lag: number;
}

export async function consumerLag(admin: Admin, group: string, topics: readonly string[]): Promise<PartitionLag[]> {
  const committed = await admin.fetchOffsets({ groupId: group, topics: [...topics] });
  const out: PartitionLag[] = [];
  for (const { topic, partitions } of committed) {
    const ends = new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, p]));
    for (const { partition, offset } of partitions) {
      const end = ends.get(partition);
      if (!end) continue;
      const from = Number(offset) >= 0 ? Number(offset) : Number(end.low);
      out.push({ group, topic, partition, lag: Math.max(0, Number(end.high) - from) });
    }
  }
  return out;
}
