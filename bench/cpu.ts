// CPU accounting for benchmarks whose cost is spread over a whole stack: the
// machine's busy time (/proc/stat) and each process's own (/proc/<pid>/stat), in
// milliseconds, so that a run's CPU can be divided by its units of work and
// attributed to the processes that spent it (Linux only).
import { readdirSync, readFileSync } from 'node:fs';
import { processCpuMs, procStat, TICK_MS, type ProcStat } from './lib.ts';

/** The machine's CPU time so far (all CPUs, /proc/stat's first line): fields by name, in milliseconds. */
function machineTimes(): Record<'user' | 'nice' | 'system' | 'idle' | 'iowait' | 'irq' | 'softirq' | 'steal', number> {
  const [user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map((t) => Number(t) * TICK_MS) as number[];
  return { user: user!, nice: nice!, system: system!, idle: idle!, iowait: iowait!, irq: irq!, softirq: softirq!, steal: steal! };
}

/** Busy time of the whole machine so far (all CPUs: everything but idle and iowait). */
export function machineBusyMs(): number {
  const t = machineTimes();
  return t.user + t.nice + t.system + t.irq + t.softirq + t.steal;
}

/**
 * Time the hypervisor ran something else while this machine's CPUs had work (steal), so far: part of
 * the busy time above, spent by no process here; a run with much of it ran on a slowed machine.
 */
export function machineStealMs(): number {
  return machineTimes().steal;
}

/**
 * Interrupt time so far: packets handled in softirq (here mostly the loopback network between the
 * processes), which the kernel charges to no process.
 */
export function machineInterruptMs(): number {
  const t = machineTimes();
  return t.irq + t.softirq;
}

/** Every process on the machine now, kernel threads included (one that ends meanwhile is left out). */
export function allProcesses(): ProcStat[] {
  const found: ProcStat[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      found.push(procStat(Number(entry)));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** The pids of a process and its descendants (nginx's worker, a process's forks). */
export function withChildren(pid: number): number[] {
  const found = [pid];
  for (const p of allProcesses().sort((a, b) => a.pid - b.pid)) if (found.includes(p.ppid)) found.push(p.pid);
  return found;
}

/**
 * A Node process's threads by part: its main thread (the event loop), its worker threads (Node names
 * them WorkerThread: the ingress's scan journal shipper, and render threads when they work) and the
 * rest (V8's compiler and garbage collector helpers, libuv's pool), each as `<pid>/task/<tid>`, which
 * sampleCpu reads as it reads a process.
 */
export function threadsOf(pid: number): { main: string[]; workers: string[]; helpers: string[] } {
  const found = { main: [`${pid}/task/${pid}`], workers: [] as string[], helpers: [] as string[] };
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return found;
  }
  for (const tid of tids.map(Number).filter((t) => t !== pid)) {
    let comm = '';
    try {
      comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
    } catch {
      continue;
    }
    (comm === 'WorkerThread' ? found.workers : found.helpers).push(`${pid}/task/${tid}`);
  }
  return found;
}

/** A process's command line, or '' when it is gone. */
function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

/** A Node process's script, as its command line gives it (the first argument ending in .ts, .js or .mjs), or '?'. */
function scriptOf(pid: number): string {
  const script = cmdline(pid).split(' ').find((arg) => /\.(ts|js|mjs)$/.test(arg));
  return script ? script.replace(/^.*\/(?=[^/]+\/[^/]+$)/, '') : '?';
}

/** The stack's processes by part, as this machine's local stack runs them (infra/local/stack.sh). */
export function stackProcesses(): Record<string, number[]> {
  const all = allProcesses();
  const pick = (test: (p: ProcStat) => boolean) => all.filter(test).map((p) => p.pid);
  return {
    postgres: pick((p) => p.comm === 'postgres'),
    clickhouse: pick((p) => p.comm.startsWith('clickhouse')),
    kafka: pick((p) => p.comm === 'java' && cmdline(p.pid).includes('kafka.Kafka')),
    'schema registry': pick((p) => p.comm === 'java' && /apicurio|quarkus/i.test(cmdline(p.pid))),
    redis: pick((p) => p.comm === 'redis-server'),
  };
}

/** A sample of each group's processes: CPU so far per pid. */
export type CpuSample = Record<string, Map<number | string, number>>;

/** CPU so far of each process of each named group (a process that is gone is left out). */
export function sampleCpu(groups: Record<string, (number | string)[]>): CpuSample {
  const sample: CpuSample = {};
  for (const [name, pids] of Object.entries(groups)) {
    const byPid = new Map<number | string, number>();
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
 * CPU spent between two samples, per group: the growth of each process seen in both, and all of
 * the CPU of one that started meanwhile (a Postgres backend or autovacuum worker forked during the
 * run). A process that ended meanwhile took its last CPU with it, and is left out rather than
 * counted negative (the machine's busy time still has it, under `other`).
 */
export function cpuDelta(before: CpuSample, after: CpuSample): Record<string, number> {
  return Object.fromEntries(Object.entries(after).map(([name, pids]) => {
    let spent = 0;
    for (const [pid, ms] of pids) spent += ms - (before[name]?.get(pid) ?? 0);
    return [name, spent];
  }));
}

/** CPU so far of every process on the machine, kernel threads included, by pid (with its name). */
export function sampleAll(): Map<number, { comm: string; ms: number }> {
  return new Map(allProcesses().map((p) => [p.pid, { comm: p.comm, ms: p.cpuMs }]));
}

/** The CPU of the processes outside `groups` between two samples, summed by name, largest first (the load generator, counted apart, left out). */
export function otherProcesses(before: Map<number, { comm: string; ms: number }>, after: Map<number, { comm: string; ms: number }>, groups: Record<string, (number | string)[]>, top = 6): [string, number][] {
  // A process grouped by its threads (`<pid>/task/<tid>`, threadsOf) is grouped too.
  const grouped = new Set(Object.values(groups).flat().map((p) => (typeof p === 'string' ? Number(p.split('/')[0]) : p)));
  const byName = new Map<string, number>();
  for (const [pid, { comm, ms }] of after) {
    const was = before.get(pid);
    if (grouped.has(pid) || !was || comm === 'wrk') continue;
    // A kernel worker's name carries its CPU and index (kworker/1:2): one name for all of them. Every
    // Node process is named MainThread: it is named by its script instead.
    const name = comm === 'MainThread' ? `node ${scriptOf(pid)}` : comm.replace(/\/.*$/, '');
    byName.set(name, (byName.get(name) ?? 0) + ms - was.ms);
  }
  return [...byName].filter(([, ms]) => ms > 0).sort((a, b) => b[1] - a[1]).slice(0, top);
}
