// Throwaway Kafka for fault tests, on ports of its own, beside the stack's shared broker: a
// three-node cluster (STACK_KAFKA_NODES=3), or a single broker of a file's own that the file stops
// and starts (ownKafka). infra/local/stack.sh starts it (STACK_DIR, STACK_KAFKA_PORT) in a folder of
// its own under .stack/test-kafka/, and this module stops, resumes, kills and restarts its nodes and
// removes it all.
// They always start plaintext and without SASL, also under `STACK_SECURE=1 bash infra/local/run.sh
// test` (whose environment holds the secured stack's Kafka settings and STACK_SECURE): a cluster of
// their own secured would have a CA and passwords of its own, not the environment's. Their clients
// take `env` (plaintextKafkaEnv), which overrides the environment's Kafka TLS and SASL settings.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { alive, freePortBlock } from './own-services.ts';

/**
 * A first client port whose six ports (client and controller per node) are free: 19000-19965, below
 * the ports test processes listen on (processes.ts) and the kernel's ephemeral range.
 */
const freeBasePort = () => freePortBlock(19000, 19965, 6);

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLUSTERS = `${ROOT}.stack/test-kafka`;
const run = promisify(execFile);

export const NODES = [1, 2, 3] as const;
export type Node = (typeof NODES)[number];

/**
 * The Kafka settings of a client of a test Kafka: its brokers, plaintext, no SASL (each setting the
 * secured stack's service.env gives set empty, which counts as not given).
 */
export function plaintextKafkaEnv(brokers: string): Record<string, string> {
  const off: Record<string, string> = { KAFKA_SSL: 'off' };
  for (const name of ['KAFKA_SSL_CA_FILE', 'KAFKA_SSL_CERT_FILE', 'KAFKA_SSL_KEY_FILE', 'KAFKA_SASL_MECHANISM', 'KAFKA_SASL_USERNAME', 'KAFKA_SASL_PASSWORD', 'KAFKA_SASL_PASSWORD_FILE']) off[name] = '';
  return { KAFKA_BROKERS: brokers, ...off };
}

export interface TestCluster {
  /** Every node's address, as KAFKA_BROKERS takes them. */
  brokers: string;
  /** The settings of a process that uses it instead of the stack's Kafka (plaintextKafkaEnv). */
  env: Record<string, string>;
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
  const stack = (...args: string[]) => stackSh(dir, port, 3, args);
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
  const brokers = NODES.map(addressOf).join(',');
  return {
    brokers,
    env: plaintextKafkaEnv(brokers),
    addressOf,
    portOf,
    pidOf,
    pause: (node) => process.kill(pidOf(node), 'SIGSTOP'),
    resume: (node) => process.kill(pidOf(node), 'SIGCONT'),
    kill: async (node) => {
      const pid = pidOf(node);
      process.kill(pid, 'SIGKILL');
      await gone(pid, 'SIGKILL');
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

export interface OwnKafka {
  /** Its address, as KAFKA_BROKERS takes it. */
  brokers: string;
  /** The settings of a process that uses it instead of the stack's Kafka (plaintextKafkaEnv). */
  env: Record<string, string>;
  /** SIGTERM, and waits until the process is gone. */
  stop: () => Promise<void>;
  /** Starts it again and waits until it leads every partition of its topics. */
  start: () => Promise<void>;
  /** The test file is done with it: removes it. */
  release: () => Promise<void>;
}

/**
 * A single broker of the calling file's own, for a file that stops Kafka and starts it again: the
 * stack's broker stays up for every other file, and this one holds only the file's topics, so it is
 * back in seconds (the stack's, holding the whole run's thousands of partitions, takes a minute and more
 * late in a run). The registry is the stack's (it keeps its schemas in Postgres, not in Kafka).
 */
export async function ownKafka(): Promise<OwnKafka> {
  await removeLeftClusters();
  const port = await freeBasePort();
  const dir = `${CLUSTERS}/${process.pid}-${port}-single`;
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}/owner`, String(process.pid));
  const stack = (...args: string[]) => stackSh(dir, port, 1, args);
  const brokers = `127.0.0.1:${port}`;
  const start = async () => {
    await stack('start', 'kafka');
    await leadsEveryPartition(brokers, 60_000);
  };
  try {
    await start();
  } catch (err) {
    await stack('stop', 'kafka').catch(() => undefined);
    throw err;
  }
  return {
    brokers,
    env: plaintextKafkaEnv(brokers),
    start,
    stop: async () => {
      const pid = Number(readFileSync(`${dir}/run/kafka.pid`, 'utf8').trim());
      process.kill(pid, 'SIGTERM');
      await gone(pid, 'SIGTERM');
    },
    release: async () => {
      await stack('stop', 'kafka');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Waits until a (re)started broker leads every partition: it answers as healthy while it still loads
 * its partitions, and a send refused by some of them would be sent again whole by kafkajs, and a
 * consumer group could find no coordinator yet.
 */
async function leadsEveryPartition(brokers: string, timeoutMs: number): Promise<void> {
  const admin = new Kafka({ brokers: brokers.split(','), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  // (A loop of its own, not env.ts's eventually: the run's global set-up loads this module, outside any test file.)
  const end = Date.now() + timeoutMs;
  try {
    for (;;) {
      try {
        const { topics } = await admin.fetchTopicMetadata({ topics: await admin.listTopics() });
        if (topics.every((t) => t.partitions.every((p) => p.leader >= 0 && p.partitionErrorCode === 0))) return;
      } catch {
        // Metadata not served yet: ask again.
      }
      if (Date.now() > end) throw new Error(`the test Kafka at ${brokers} did not lead every partition within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await admin.disconnect();
  }
}

/** stack.sh for the Kafka in `dir`, plaintext (see the top); a stop there is a kill (the data goes anyway). */
async function stackSh(dir: string, port: number, nodes: 1 | 3, args: string[]): Promise<void> {
  const env: NodeJS.ProcessEnv = { ...process.env, STACK_DIR: dir, STACK_KAFKA_NODES: String(nodes), STACK_KAFKA_PORT: String(port), STACK_STOP_TIMEOUT: '0' };
  delete env.STACK_SECURE;
  try {
    await run('bash', [`${ROOT}infra/local/stack.sh`, ...args], { cwd: ROOT, env, timeout: 180_000 });
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    throw new Error(`stack.sh ${args.join(' ')} for the test Kafka failed:\n${stdout ?? ''}${stderr ?? ''}`);
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
    // (stack.sh stops the single broker and every node with a pid file, whatever STACK_KAFKA_NODES says.)
    if (port) await stackSh(dir, port, 3, ['stop', 'kafka']);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Waits until a Kafka process sent `signal` is gone, for at most 60 s. */
async function gone(pid: number, signal: NodeJS.Signals): Promise<void> {
  for (let i = 0; i < 1200 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
  if (alive(pid)) throw new Error(`the test Kafka process ${pid} did not end within 60 s of ${signal}`);
}
