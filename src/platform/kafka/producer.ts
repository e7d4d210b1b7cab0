// The producer every process publishes with (the platform's publisher, the scan shipper): one place
// for the settings that decide how a publish behaves when a broker dies or hangs.
//
// A leader stopped (SIGSTOP) or lost without a reset answers nothing, and its followers' partitions
// wait for it too (acks=all) until the cluster fences it: broker.session.timeout.ms (9 s by default)
// after its last heartbeat the controller gives its partitions other leaders and drops it from the
// metadata. A publish then goes on after one metadata refresh: while a send waits, kafkajs (patched:
// patches/kafkajs+2.2.4+003+hung-leader-fenced.patch) refreshes the metadata as it reaches METADATA_MAX_AGE_MS (metadata-age.ts), from the
// first broker that answers, and fails the requests a broker gone from the metadata holds, so the
// send retries on the new leaders instead of waiting for requestTimeout (client.ts). Measured with
// bench/kafka-failover.bench.ts.
import type { Kafka, Producer } from 'kafkajs';
import { CachedDefaultPartitioner } from './cached-partitioner.ts';
import { METADATA_MAX_AGE_MS } from './metadata-age.ts';

export function createProducer(kafka: Kafka): Producer {
  return kafka.producer({
    allowAutoTopicCreation: false,
    // The Java-compatible murmur2 partitioner: a key lands on the same partition whichever client produced it.
    createPartitioner: CachedDefaultPartitioner,
    metadataMaxAge: METADATA_MAX_AGE_MS,
    // A send to a dead leader fails at once (connection refused) until the cluster elects another: waits
    // of at most 1 s between attempts resume it within a second of the election (the client's 5 s cap
    // could add 5 s), and 60 of them still span the ~55 s the client's retries do.
    retry: { initialRetryTime: 100, maxRetryTime: 1000, retries: 60 },
  });
}
