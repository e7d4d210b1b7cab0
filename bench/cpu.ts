// CPU accounting for benchmarks whose cost is spread over a whole stack: the
// machine's busy time (/proc/stat) and each process's own (/proc/<pid>/stat), in
// milliseconds, so that a run's CPU can be divided by its units of work and
// attributed to the processes that spent it (Linux only).
import { readdirSync, readFileSync } from 'node:fs';
import { processCpuMs } from './lib.ts';

/** Linux's USER_HZ, what /proc counts CPU time in (100 on every common build). */
const TICK_MS = 10;

/** Busy time of the whole machine so far (all CPUs: everything but idle and iowait). */
export function machineBusyMs(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal
  const [user, nice, system, , , irq, softirq, steal] = fields as number[];
  return (user! + nice! + system! + irq! + softirq! + steal!) * TICK_MS;
}

interface ProcessInfo {
  pid: number;
  comm: string;
  cmdline: string;
}

function processes(): ProcessInfo[] {
  const found: ProcessInfo[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      found.push({
        pid: Number(entry),
        comm: readFileSync(`/proc/${entry}/comm`, 'utf8').trim(),
        cmdline: readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' '),
      });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** The stack's processes by part, as this machine's local stack runs them (infra/local/stack.sh). */
export function stackProcesses(): Record<string, number[]> {
  const all = processes();
  const pick = (test: (p: ProcessInfo) => boolean) => all.filter(test).map((p) => p.pid);
  return {
    postgres: pick((p) => p.comm === 'postgres'),
    clickhouse: pick((p) => p.comm.startsWith('clickhouse')),
    kafka: pick((p) => p.comm === 'java' && p.cmdline.includes('kafka.Kafka')),
    'schema registry': pick((p) => p.comm === 'java' && /apicurio|quarkus/i.test(p.cmdline)),
    redis: pick((p) => p.comm === 'redis-server'),
  };
}

/** A sample of each group's processes: CPU so far per pid. */
export type CpuSample = Record<string, Map<number, number>>;

/** CPU so far of each process of each named group (a process that is gone is left out). */
export function sampleCpu(groups: Record<string, number[]>): CpuSample {
  const sample: CpuSample = {};
  for (const [name, pids] of Object.entries(groups)) {
    const byPid = new Map<number, number>();
    for (const pid of pids) {
      try {
        byPid.set(pid, processCpuMs(pid));
      } catch {
        // gone meanwhile
      }
    }
    sample[name] = byPid;
  }
  return sample;
}

/**
 * CPU spent between two samples, per group: the growth of each process seen in both (a process
 * that ended meanwhile took its last CPU with it, and is left out rather than counted negative).
 */
export function cpuDelta(before: CpuSample, after: CpuSample): Record<string, number> {
  return Object.fromEntries(Object.entries(after).map(([name, pids]) => {
    let spent = 0;
    for (const [pid, ms] of pids) {
      const was = before[name]?.get(pid);
      if (was !== undefined) spent += ms - was;
    }
    return [name, spent];
  }));
}
