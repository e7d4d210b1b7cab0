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
  /** Stops every node at once and removes the cluster's folder. */
  remove: () => Promise<void>;
}

/** Starts a new cluster (in ~20-40 s on this 2-core machine), after removing any that a dead test process left. */
export async function startTestCluster(): Promise<TestCluster> {
  await removeLeftClusters();
  const port = await freeBasePort();
  const dir = `${CLUSTERS}/${process.pid}-${port}`;
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}/owner`, String(process.pid));
  const stack = (...args: string[]) => stackSh(dir, port, args);
  const pidOf = (node: Node) => Number(readFileSync(`${dir}/run/kafka-${node}.pid`, 'utf8').trim());
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
    remove: async () => {
      // A paused node would take a TERM only once resumed: everything is resumed, then killed at once.
      for (const node of NODES) if (existsSync(`${dir}/run/kafka-${node}.pid`) && alive(pidOf(node))) process.kill(pidOf(node), 'SIGCONT');
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
  if (!existsSync(CLUSTERS)) return;
  for (const name of readdirSync(CLUSTERS)) {
    const dir = `${CLUSTERS}/${name}`;
    // (A folder without an owner yet is being made.)
    if (!existsSync(`${dir}/owner`) || alive(Number(readFileSync(`${dir}/owner`, 'utf8')))) continue;
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
