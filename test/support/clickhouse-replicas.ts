// Throwaway replicated ClickHouse for fault tests, beside the stack's single server: three ZooKeeper
// 3.8 nodes (an ensemble) and three ClickHouse 18.16 replicas of one shard, on ports of their own.
// infra/local/stack.sh starts them (`start clickhouse-replicas`, STACK_DIR, STACK_CH_REPLICA_PORT) in a
// folder of their own under .stack/test-clickhouse/; this module kills, hangs and restarts each
// process, queries one replica by itself, and removes it all.
// Plain HTTP and user `default` without a password, also under `STACK_SECURE=1 bash infra/local/run.sh
// test`: their clients take `env` (replicasEnv), which overrides the environment's ClickHouse settings.
// No vitest here: benches use it too.
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { alive, freePortBlock } from './own-services.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FOLDERS = `${ROOT}.stack/test-clickhouse`;
const run = promisify(execFile);

export const REPLICAS = [1, 2, 3] as const;
export type Replica = (typeof REPLICAS)[number];

/**
 * A base port whose block (node i: base + 10i + 0 HTTP, 1 native, 2 interserver, 5-7 ZooKeeper) is
 * free: 15000-15999, below the secured test stacks (17000-18999), the test Kafka clusters (19000-19965)
 * and the ports test processes listen on (20000 and up).
 */
const freeBasePort = () => freePortBlock(15000, 15999, 40);

/** The ClickHouse settings of a client of the replicas: every replica, replicated tables, user `default`, plain HTTP. */
export function replicasEnv(urls: readonly string[]): Record<string, string> {
  return { CLICKHOUSE_URL: urls.join(','), CLICKHOUSE_REPLICATED: 'on', CLICKHOUSE_USER: '', CLICKHOUSE_PASSWORD: '', CLICKHOUSE_PASSWORD_FILE: '', CLICKHOUSE_CA_FILE: '' };
}

export interface TestReplicas {
  /** stack.sh's settings for them (STACK_DIR, STACK_CH_REPLICA_PORT): `run.sh` with these and STACK_CLICKHOUSE_REPLICAS=3 starts them there. */
  stackEnv: Record<string, string>;
  /** Every replica's HTTP address, in replica order. */
  urls: string[];
  /** The settings of a process that uses them instead of the stack's ClickHouse (replicasEnv). */
  env: Record<string, string>;
  /** The replica's HTTP address. */
  urlOf: (replica: Replica) => string;
  /** The ZooKeeper node's client address (host:port). */
  zookeeperOf: (node: Replica) => string;
  /** Runs a statement on this replica alone and returns its answer's text (TabSeparated); throws on an error answer. */
  query: (replica: Replica, sql: string) => Promise<string>;
  /** The replica's process id (a restarted one has a new one). */
  pidOf: (replica: Replica) => number;
  /** SIGSTOP: the replica hangs; its connections stay open and unanswered. */
  pause: (replica: Replica) => void;
  /** SIGCONT after pause. */
  resume: (replica: Replica) => void;
  /** SIGKILL, and waits until the process is gone. */
  kill: (replica: Replica) => Promise<void>;
  /** The same for a ZooKeeper node. */
  zookeeperPidOf: (node: Replica) => number;
  pauseZooKeeper: (node: Replica) => void;
  resumeZooKeeper: (node: Replica) => void;
  killZooKeeper: (node: Replica) => Promise<void>;
  /** One zkCli command (ZooKeeperMain, e.g. `delete <path>`) on the ensemble through this node; its output. */
  zookeeperCommand: (node: Replica, ...command: string[]) => Promise<string>;
  /** Starts the ZooKeeper nodes and replicas that are not running and waits until they serve. */
  restart: () => Promise<void>;
  /** The caller is done with them: resumes what is paused, stops everything and removes the folder. */
  release: () => Promise<void>;
}

/** Starts a new ensemble and three replicas (a few seconds), after removing any that a dead test process left. */
export async function startTestReplicas(): Promise<TestReplicas> {
  const replicas = await newTestReplicas();
  try {
    await replicas.restart();
  } catch (err) {
    await replicas.release().catch(() => undefined);
    throw err;
  }
  return replicas;
}

/**
 * A folder and a free port block for an ensemble and three replicas, none started yet: `restart`
 * starts them, or `run.sh` given `stackEnv` (release stops whatever runs there).
 */
export async function newTestReplicas(): Promise<TestReplicas> {
  await removeLeftReplicas();
  const port = await freeBasePort();
  const dir = `${FOLDERS}/${process.pid}-${port}`;
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}/owner`, String(process.pid));
  const stack = (...args: string[]) => stackSh(dir, port, args);
  const pidFile = (name: string) => Number(readFileSync(`${dir}/run/${name}.pid`, 'utf8').trim());
  const pidOf = (replica: Replica) => pidFile(`clickhouse-${replica}`);
  const zookeeperPidOf = (node: Replica) => pidFile(`zookeeper-${node}`);
  const zookeeperOf = (node: Replica) => `127.0.0.1:${port + 10 * node + 5}`;
  const resumeAll = () => {
    // A paused process would take a TERM only once resumed.
    for (const name of existsSync(`${dir}/run`) ? readdirSync(`${dir}/run`) : []) {
      if (!name.endsWith('.pid')) continue;
      const pid = pidFile(name.slice(0, -4));
      if (alive(pid)) process.kill(pid, 'SIGCONT');
    }
  };
  const urlOf = (replica: Replica) => `http://127.0.0.1:${port + 10 * replica}`;
  const urls = REPLICAS.map(urlOf);
  return {
    stackEnv: { STACK_DIR: dir, STACK_CH_REPLICA_PORT: String(port) },
    urls,
    env: replicasEnv(urls),
    urlOf,
    zookeeperOf,
    query: async (replica, sql) => {
      const response = await fetch(`${urlOf(replica)}/`, { method: 'POST', body: sql, signal: AbortSignal.timeout(60_000) });
      const text = await response.text();
      if (!response.ok) throw new Error(`replica ${replica}: ${text.trim()}`);
      return text;
    },
    pidOf,
    pause: (replica) => process.kill(pidOf(replica), 'SIGSTOP'),
    resume: (replica) => process.kill(pidOf(replica), 'SIGCONT'),
    kill: (replica) => killed(pidOf(replica)),
    zookeeperPidOf,
    pauseZooKeeper: (node) => process.kill(zookeeperPidOf(node), 'SIGSTOP'),
    resumeZooKeeper: (node) => process.kill(zookeeperPidOf(node), 'SIGCONT'),
    killZooKeeper: (node) => killed(zookeeperPidOf(node)),
    zookeeperCommand: async (node, ...command) => {
      const tool = ['kafka-tool', 'org.apache.zookeeper.ZooKeeperMain', '-server', zookeeperOf(node), ...command];
      const { stdout } = await run('bash', [`${ROOT}infra/local/stack.sh`, ...tool], { cwd: ROOT, timeout: 60_000 });
      return stdout;
    },
    restart: () => stack('start', 'clickhouse-replicas'),
    release: async () => {
      resumeAll();
      await stack('stop', 'clickhouse-replicas');
      // CH_KEEP_DIR=<dir>: a copy of the folder (each process's logs, ZooKeeper's data) for a failure's diagnosis.
      if (process.env.CH_KEEP_DIR) cpSync(dir, `${process.env.CH_KEEP_DIR}/${basename(dir)}-${Date.now()}`, { recursive: true });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** stack.sh for the replicas in `dir`; a stop there is a kill (the data goes anyway). */
async function stackSh(dir: string, port: number, args: string[]): Promise<void> {
  const env: NodeJS.ProcessEnv = { ...process.env, STACK_DIR: dir, STACK_CH_REPLICA_PORT: String(port), STACK_STOP_TIMEOUT: '0' };
  delete env.STACK_SECURE;
  delete env.STACK_CLICKHOUSE_REPLICAS;
  try {
    await run('bash', [`${ROOT}infra/local/stack.sh`, ...args], { cwd: ROOT, env, timeout: 180_000 });
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    throw new Error(`stack.sh ${args.join(' ')} for the test ClickHouse replicas failed:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}

/** Removes the replicas whose test process died before removing them (killed, or crashed). */
export async function removeLeftReplicas(): Promise<void> {
  if (!existsSync(FOLDERS)) return;
  for (const name of readdirSync(FOLDERS)) {
    const dir = `${FOLDERS}/${name}`;
    // (A folder without an owner yet is being made.)
    if (!existsSync(`${dir}/owner`) || alive(Number(readFileSync(`${dir}/owner`, 'utf8')))) continue;
    const port = Number(name.split('-')[1]);
    if (port) await stackSh(dir, port, ['stop', 'clickhouse-replicas']);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** SIGKILL, then waits until the process is gone, for at most 30 s. */
async function killed(pid: number): Promise<void> {
  process.kill(pid, 'SIGKILL');
  for (let i = 0; i < 600 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
  if (alive(pid)) throw new Error(`process ${pid} did not end within 30 s of SIGKILL`);
}
