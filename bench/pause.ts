// A benchmark's processes that are not under test, stopped for one measurement.
//
// A bench that runs several servers side by side (the redirect bench: nginx, bare Fastify, Node's
// http, two of our ingresses and their workers, another build's) measured each beside the others
// idling: their timers, Kafka clients and collectors ran in every round, on the same two cores, and
// were charged to whichever server was under test (more of it to the slower one, over its fewer
// requests). Stopped with SIGSTOP, they spend nothing; the shared stack (Kafka, ClickHouse, Postgres,
// Redis, the registry) runs as always. A stop is kept short (one measurement) and the processes are
// given time to catch up after SIGCONT, outside any measured window: their clients' timers (Kafka
// heartbeats, request timeouts) fire late once, and must not be charged to the next server. A process
// back from a stop also has V8's heap and code to mend for many seconds (full collections, bytecode compiled
// again): the bench loads it a little, unmeasured, first, which lessens that, not ends it (docs/benchmarks.md).
import { withChildren } from './cpu.ts';
import type { Proc } from './lib.ts';

/** How long the stopped processes get after SIGCONT before anything is measured. */
const CATCH_UP_MS = 3000;

function signal(procs: Proc[], sig: 'SIGSTOP' | 'SIGCONT'): void {
  for (const proc of procs) {
    if (proc.child.pid === undefined || proc.child.exitCode !== null) continue;
    for (const pid of withChildren(proc.child.pid)) {
      try {
        process.kill(pid, sig);
      } catch {
        // gone meanwhile
      }
    }
  }
}

/**
 * Runs `measure` with every process of `all` but those of `underTest` stopped (their children too);
 * they go on afterwards, also when `measure` fails, and have CATCH_UP_MS before this returns.
 */
export async function withOthersPaused<T>(all: Proc[], underTest: Proc[], measure: () => Promise<T>): Promise<T> {
  const others = all.filter((proc) => !underTest.includes(proc));
  signal(others, 'SIGSTOP');
  try {
    return await measure();
  } finally {
    signal(others, 'SIGCONT');
    await new Promise((r) => setTimeout(r, CATCH_UP_MS));
  }
}
