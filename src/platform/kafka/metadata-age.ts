// How old a client's view of the cluster may grow, for producers and consumers alike. A leader that
// dies or hangs keeps its partitions until the cluster fences it (broker.session.timeout.ms, 9 s by
// default) and elects others; a client sees the new leaders at its next metadata refresh, and the
// patched kafkajs (patches/kafkajs+2.2.4+003+hung-leader-fenced.patch) then fails at once the requests the fenced broker
// holds, so that sends and fetches go to the new leaders. kafkajs's default, 5 minutes, left a
// consumer fetching from a hung leader (SIGSTOP) for minutes (bench/kafka-failover.bench.ts).
// A refresh is one small request to the brokers a second per client.

/** A leader change is seen within this after the cluster made it. */
export const METADATA_MAX_AGE_MS = 1000;
