import { existsSync } from 'node:fs';
import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// The suite runs in two groups, one after the other (sequence.groupOrder):
//   1. "side-by-side": files that cannot disturb each other, a few at a time. Each
//      file has its own topic prefix (test/support/env.ts), so no two files share
//      a topic, consumer group or registry subject; they use fresh workspaces and
//      fresh client IPs, so no rate limit or failed-attempt allowance either.
//   2. "alone": files that disturb the stack or that another file's load could
//      make fail, one at a time in one process.
// Every file is in exactly one group; a new file runs side by side unless listed here.
// A file whose processes would take or see other files' work in the run's shared databases (a mail
// sender takes every queued message, a broadcast worker every due job, an ingress relays every
// unpublished outbox row) is not listed: it calls useOwnDatabases() (test/support/own-databases.ts).
const ALONE = [
  // Time-bound: scans must be in a journal 300 ms after their redirects when the ingress is killed;
  // and a Kafka broker of its own (ownKafka in test/support/kafka-cluster.ts) to stop and start.
  'test/integration/links/scan-pipeline.test.ts',
  // Time-bound: a link taken down while Kafka is away stops within 10 s on another ingress (its own
  // Kafka broker again, which it stops).
  'test/integration/links/takedown-kafka-down.test.ts',
  // Measures an ingress's peak memory over a 50,000-row export.
  'test/integration/links/export-limits.test.ts',
  // workers/all.ts hosts every worker kind, among them the webhook dispatcher, which
  // polls the deliveries of every file of the run; and it must stop within its deadline.
  'test/integration/platform/worker-shutdown.test.ts',
  // Time-bound: events reach Redis within 5 ms, a count goes stale after 1.1 s.
  'test/integration/platform/buffered-limit.test.ts',
  // Time-bound: a changed link reaches both instances within a second.
  'test/integration/links/redirect.test.ts',
  // Time-bound: a browser must land on the destination within seconds (and chromium wants both cores).
  'test/integration/links/pixel-page-browser.test.ts',
  // Time-bound: bursts must fall within one second of Redis's clock.
  'test/integration/mail/key-rate-limit.test.ts',
  // Time-bound: no second at its relay may hold more than 12 messages; its senders poll every file's queued mail.
  'test/integration/mail/sender.test.ts',
  // Time-bound: a browser opens a sent message's preferences page (chromium wants both cores); its
  // sender takes every file's queued mail.
  'test/integration/mail/preferences-page-browser.test.ts',
  // Time-bound: retry gaps of 50 ms then 100 ms (±20%) must grow.
  'test/integration/platform/actor-runtime.test.ts',
  // These three share the run's three-node Kafka cluster (three JVMs on two cores; sharedTestCluster in
  // test/support/kafka-cluster.ts: one start for the three), which only this group's one process can share.
  // Stops one of its brokers under producers.
  'test/integration/platform/kafka-acknowledged-sends.test.ts',
  // Kills a broker under admin requests, and starts an ingress and a worker process on the cluster.
  'test/integration/platform/cluster-clean-start.test.ts',
  // Kills and stops its brokers under redirects, a fan-out and webhooks.
  'test/integration/platform/broker-faults.test.ts',
  // Three worker processes and an ingress under 3,000 redirects and a fan-out, one killed and one stopped:
  // beside broadcasts and automations (kill tests of their own) the three loaded the two cores past their bounds.
  'test/integration/platform/worker-processes.test.ts',
  // Time-bound: reads must move off a killed or hung ClickHouse replica (three of its own, and a ZooKeeper ensemble) within 2 s.
  'test/integration/platform/clickhouse-replica-failover.test.ts',
  // Kills and hangs ClickHouse replicas and a ZooKeeper node of its own under 3,000 redirects, conversions and analytics reads.
  'test/integration/platform/clickhouse-replica-faults.test.ts',
  // Kills the ClickHouse replica (three of its own) under 20,000-scan inserts, five times.
  'test/integration/platform/clickhouse-rollup-retry.test.ts',
  // Erases scans of an old month on three ClickHouse replicas of its own (and a ZooKeeper ensemble).
  'test/integration/links/scan-erasure-replicas.test.ts',
];

// A renamed file would otherwise quietly run side by side.
for (const file of ALONE) if (!existsSync(new URL(file, import.meta.url))) throw new Error(`vitest.config.ts: ${file} (ALONE) does not exist`);

// The longest files of the side-by-side group start first, so that none of them is the group's
// tail; vitest would otherwise order them by the durations cached from the last run (none in a
// fresh checkout: then by file size, which puts the short worker-crash file last).
const LONGEST = [
  'test/integration/mail/broadcasts.test.ts', // ~85 s beside others: kill -9 during a fan-out, then a sender and relay
  'test/integration/mail/automations.test.ts', // ~60 s: kill -9 during runs, a moved clock, a sender and relay
  'test/integration/links/webhooks.test.ts', // ~45 s, mostly waiting out a killed worker's Kafka session
  'test/integration/mail/mail-webhooks.test.ts', // ~40 s: events across kills of its worker
  'test/integration/mail/emails-crash.test.ts', // ~40 s: an ingress killed after storing, and its relay
  'test/integration/mail/mail-webhook-events.test.ts', // ~37 s: every event kind through a sender, the relay and receivers
  'test/integration/platform/operations.test.ts', // ~33 s: scrapes of every process kind
  'test/unit/links/qr-style-scannable.test.ts', // ~30 s of one core (ZXing and zbar decode 504 images)
  'test/integration/mail/sender-guards.test.ts', // ~25-45 s: sender processes and their relay
  'test/integration/links/qr-and-barcodes.test.ts', // ~25 s of rendering
  'test/integration/platform/run-supervision.test.ts', // ~22 s: run.sh's supervisor restarting killed processes
  'test/integration/platform/worker-crash.test.ts', // ~17 s, waiting out a killed worker's Kafka session
];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification) => {
      const i = LONGEST.findIndex((file) => spec.moduleId.endsWith(file));
      return i < 0 ? LONGEST.length : i;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

const common = {
  setupFiles: ['test/support/stop-children.ts'],
  testTimeout: 60_000,
  hookTimeout: 120_000,
};

export default defineConfig({
  test: {
    // Runs once for the whole suite (the root project's), whatever the groups.
    globalSetup: ['test/global-setup.ts'],
    reporters: ['default'],
    // A passing test prints nothing; a failing one prints what it and the processes it ran in-process
    // logged (src/platform/logger.ts sends their lines through console under vitest).
    silent: 'passed-only',
    // The side-by-side group's width. The machine has 2 cores; most files spend their
    // time waiting on Kafka and the other services, so a third keeps them both busy.
    maxWorkers: 3,
    minWorkers: 1,
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        test: {
          ...common,
          name: 'side-by-side',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...ALONE],
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...common,
          name: 'alone',
          include: ALONE,
          sequence: { groupOrder: 1 },
          // One process runs the group's files one after another (each file still gets fresh modules).
          poolOptions: { forks: { singleFork: true } },
        },
      },
    ],
  },
});
