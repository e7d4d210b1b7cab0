// Kafka's default partitioner (the Java client's murmur2 of the key) with its
// answers remembered: for a keyed message the partition depends only on the
// key and the topic's partition count, and a busy producer (the scan shipper)
// sends the same few thousand workspace keys over and over. Unkeyed messages
// and explicit partitions go to the default partitioner unchanged.
import { Partitioners, type ICustomPartitioner } from 'kafkajs';
import { RecentCache } from '../recent-cache.ts';

export const CachedDefaultPartitioner: ICustomPartitioner = () => {
  const partitioner = Partitioners.DefaultPartitioner();
  const known = new RecentCache<number>(10_000);
  return (args) => {
    const { topic, partitionMetadata, message } = args;
    if (typeof message.key !== 'string' || (message.partition !== null && message.partition !== undefined)) return partitioner(args);
    return known.get(`${topic}\u0000${partitionMetadata.length}\u0000${message.key}`, () => partitioner(args));
  };
};
