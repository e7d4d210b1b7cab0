// A throwaway three-node Kafka cluster for fault tests, on ports of its own, beside the stack's
// shared broker: infra/local/stack.sh starts it (STACK_KAFKA_NODES=3, STACK_DIR, STACK_KAFKA_PORT),
// in a folder of its own under .stack/test-kafka/, and this module stops, resumes, kills and
// restarts its nodes and removes it all.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLUSTERS = `${ROOT}.stack/test-kafka`;
const run = promisify(execFile);

export const NODES = [1, 2, 3] as const;
export type Node = (typeof NODES)[number];

export interface TestCluster {
  /** Every node's address, as KAFKA_BROKERS takes them. */
  brokers: string;
  /** The node's client address. */
  addressOf: (node: Node) => string;
  /** The node's client port. */
  portOf: (node: Node) => number;
  /** The node's process id (a restarted node has a new one). */
  pidOf: (node: Node) => number;
  /** SIGSTOP: the node hangs, its connections stay open and unanswered. */
  pause: (node: Node) => void;
  /** SIGCONT after pause. */
  resume: (node: Node) => void;
  /** SIGKILL, and waits until the process is gone. */
  kill: (node: Node) => Promise<void>;
  /** Starts the nodes that are not running and waits until they answer. */
  restart: () => Promise<void>;
  /** The test file is done with it: resumes a paused node, then removes a cluster of the file's own; the run's shared one stays. */
  release: () => Promise<void>;
}

/** Starts a new cluster (in ~20-40 s on this 2-core machine), after removing any that a dead test process left. */
export async function startTestCluster(): Promise<TestCluster> {
  await removeLeftClusters();
  return startCluster(`${process.pid}-${await freeBasePort()}`, process.pid, false);
}

/**
 * The run's cluster, for the fault-test files of the "alone" group, which one process runs one after
 * another: the first file to ask starts it, the next ones find it (with any node an earlier file left
 * down started again), so the run pays one start instead of one per file. Its owner is the run's main
 * process (this process's parent), and the run's teardown removes it (removeRunClusters). Each file
 * names its topics apart (its own prefix), so one file's topics never meet another's.
 */
export async function sharedTestCluster(): Promise<TestCluster> {
  await removeLeftClusters();
  const owner = process.ppid;
  const found = existsSync(CLUSTERS) ? readdirSync(CLUSTERS).find((name) => name.startsWith(`${owner}-`) && name.endsWith(SHARED)) : undefined;
  return startCluster(found ?? `${owner}-${await freeBasePort()}${SHARED}`, owner, true);
}

const SHARED = '-shared';

/** Starts the nodes of the cluster in CLUSTERS/name that are not running (all of a new one). */
async function startCluster(name: string, owner: number, shared: boolean): Promise<TestCluster> {
  const port = Number(name.split('-')[1]);
  const dir = `${CLUSTERS}/${name}`;
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}/owner`, String(owner));
  const stack = (...args: string[]) => stackSh(dir, port, args);
  const pidOf = (node: Node) => Number(readFileSync(`${dir}/run/kafka-${node}.pid`, 'utf8').trim());
  const resumeAll = () => {
    // A paused node would take a TERM only once resumed.
    for (const node of NODES) if (existsSync(`${dir}/run/kafka-${node}.pid`) && alive(pidOf(node))) process.kill(pidOf(node), 'SIGCONT');
  };
  try {
    await stack('start', 'kafka');
  } catch (err) {
    await stack('stop', 'kafka').catch(() => undefined);
    throw err;
  }
  const portOf = (node: Node) => port + 2 * (node - 1);
  const addressOf = (node: Node) => `127.0.0.1:${portOf(node)}`;
  return {
    brokers: NODES.map(addressOf).join(','),
    addressOf,
    portOf,
    pidOf,
    pause: (node) => process.kill(pidOf(node), 'SIGSTOP'),
    resume: (node) => process.kill(pidOf(node), 'SIGCONT'),
    kill: async (node) => {
      const pid = pidOf(node);
      process.kill(pid, 'SIGKILL');
      while (alive(pid)) await new Promise((r) => setTimeout(r, 50));
    },
    restart: async () => {
      await stack('start', 'kafka');
    },
    release: async () => {
      resumeAll();
      if (shared) return;
      await stack('stop', 'kafka');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** stack.sh for the cluster in `dir`; a stop there is a kill (the data goes anyway). */
async function stackSh(dir: string, port: number, args: string[]): Promise<void> {
  const env = { ...process.env, STACK_DIR: dir, STACK_KAFKA_NODES: '3', STACK_KAFKA_PORT: String(port), STACK_STOP_TIMEOUT: '0' };
  try {
    await run('bash', [`${ROOT}infra/local/stack.sh`, ...args], { cwd: ROOT, env, timeout: 180_000 });
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    throw new Error(`stack.sh ${args.join(' ')} for the test cluster failed:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}

/** Removes the clusters whose test process died before removing them (killed, or crashed). */
export async function removeLeftClusters(): Promise<void> {
  await removeClusters((owner) => !alive(owner));
}

/** Removes the clusters this run's main process owns (the shared one), from the run's teardown. */
export async function removeRunClusters(): Promise<void> {
  await removeClusters((owner) => owner === process.pid);
}

async function removeClusters(removable: (owner: number) => boolean): Promise<void> {
  if (!existsSync(CLUSTERS)) return;
  for (const name of readdirSync(CLUSTERS)) {
    const dir = `${CLUSTERS}/${name}`;
    // (A folder without an owner yet is being made.)
    if (!existsSync(`${dir}/owner`) || !removable(Number(readFileSync(`${dir}/owner`, 'utf8')))) continue;
    const port = Number(name.split('-')[1]);
    if (port) await stackSh(dir, port, ['stop', 'kafka']);
    rmSync(dir, { recursive: true, force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A first client port whose six ports (client and controller per node) are free: 19000-19965, below
 * the ports test processes listen on (test/support/processes.ts) and the kernel's ephemeral range.
 */
async function freeBasePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 19000 + 6 * Math.floor(Math.random() * 161);
    const free = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => portFree(base + i)));
    if (free.every(Boolean)) return base;
  }
  throw new Error('no six free ports in 19000-19965');
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
