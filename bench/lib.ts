// Shared pieces of the benchmarks: processes started on loopback with their own
// databases and topic prefix, autocannon runs bounded in time and count, and
// results written as JSON under bench/results/.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { loadConfig } from '../src/platform/config.ts';
import { deleteOwned, underPrefix } from '../test/support/kafka-leftovers.ts';
import { createClickHouse, type ClickHouseConfig } from '../src/platform/clickhouse/client.ts';
import { sql } from '../src/platform/clickhouse/literal.ts';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));

/**
 * The memory settings `npm start`, `npm run workers` and run.sh give both processes (docs/operations.md,
 * "Memory"): a small young generation per V8 instance, and two malloc arenas instead of glibc's eight per core.
 */
export const PROCESS_SETTINGS = { NODE_OPTIONS: '--max-semi-space-size=8', MALLOC_ARENA_MAX: '2' };

/** The ingress's own on top (package.json, run.sh): large image buffers stay in malloc's heap (docs/links-api.md). */
export const INGRESS_SETTINGS = { MALLOC_MMAP_THRESHOLD_: '33554432', MALLOC_TRIM_THRESHOLD_: '268435456' };

/** Settings of every benchmark process: a separate database, ClickHouse database and topic prefix. */
export const BENCH_ENV: Record<string, string> = {
  NODE_ENV: 'production',
  NODE_OPTIONS: `${PROCESS_SETTINGS.NODE_OPTIONS} ${process.env.NODE_OPTIONS ?? ''}`.trim(),
  MALLOC_ARENA_MAX: PROCESS_SETTINGS.MALLOC_ARENA_MAX,
  LOG_LEVEL: 'info',
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/linkmail_bench',
  CLICKHOUSE_DATABASE: 'linkmail_bench',
  TOPIC_PREFIX: 'bench',
  CLICK_ID_SECRET: 'bench-click-id-secret-0123456789',
  MAIL_LINK_SECRET: 'bench-mail-link-secret-0123456789',
  ADMIN_TOKEN: 'bench-admin-token-0123456789',
  // Production refuses to start without a key that seals stored secrets.
  SECRETS_KEYS: 'bench:YmVuY2gtc2VjcmV0cy1rZXktMDEyMzQ1Njc4OWFiY2Q=',
  SCAN_JOURNAL_DIR: `${ROOT}.stack/bench-journal`,
  MAIL_INBOUND_SMTP_PORT: '0',
  // No SMTP relay (production would need its certificate).
  MAIL_RELAY_SMTP_PORT: '-1',
  // Any free operations port (/metrics): a bench runs several ingresses or worker processes at once.
  METRICS_PORT: '0',
  // A process a bench stops while it measures another (pause.ts) keeps its consumer groups' places
  // and its Postgres sessions (a worker's advisory locks) through the stop, rather than rejoining and
  // reconnecting in the next server's measured window.
  ACTOR_SESSION_TIMEOUT_MS: '120000',
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '300000',
  // Every benchmark process gets the ingress's malloc settings (they also render QR codes in their own process).
  ...INGRESS_SETTINGS,
};

export interface Proc {
  child: ChildProcess;
  output: () => string;
  stop: () => Promise<void>;
}

/** Starts a TypeScript entry point (with `args`) with node and waits for `ready` in its output; `cwd`: another build's root (baseline-build.ts). */
export async function start(entry: string, env: Record<string, string>, ready: string, timeoutMs = 120_000, args: string[] = [], cwd = ROOT): Promise<Proc> {
  // BENCH_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the processes under test.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, entry, ...args], { cwd, env: { ...process.env, ...BENCH_ENV, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const end = Date.now() + timeoutMs;
  while (!out.includes(ready)) {
    if (child.exitCode !== null) throw new Error(`${entry} exited:\n${out}`);
    if (Date.now() > end) throw new Error(`${entry} not ready:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    output: () => out,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/** A random port below the kernel's ephemeral range (32768 and up), where outgoing connections could hold it. */
export const freePort = () => 20000 + Math.floor(Math.random() * 12000);

/** The middle value by `by` (of three rounds: the one between the other two). */
export function medianBy<T>(values: readonly T[], by: (value: T) => number): T {
  return [...values].sort((a, b) => by(a) - by(b))[Math.floor(values.length / 2)]!;
}

export interface LoadResult {
  requestsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  requests: number;
  non2xx3xx: number;
  errors: number;
}

/** One autocannon run, bounded by duration and by request count. */
export async function load(url: string, options: { connections: number; seconds: number; maxRequests?: number; rate?: number; headers?: Record<string, string>; method?: 'GET' | 'POST'; body?: string }): Promise<LoadResult> {
  const result = await autocannon({
    url,
    ...(options.method ? { method: options.method } : {}),
    ...(options.body ? { body: options.body } : {}),
    connections: options.connections,
    duration: options.seconds,
    // Bounded in time (duration) and in count (maxOverallRequests stops early; `amount` would replace the duration).
    ...(options.maxRequests ? { maxOverallRequests: options.maxRequests } : {}),
    ...(options.rate ? { overallRate: options.rate } : {}),
    headers: options.headers ?? {},
  });
  const other = result.non2xx - (result.statusCodeStats?.['302']?.count ?? 0);
  return {
    requestsPerSecond: Math.round(result.requests.average),
    latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max },
    requests: result.requests.total,
    non2xx3xx: Math.max(0, other),
    errors: result.errors + result.timeouts,
  };
}

export async function adminCreateKey(base: string): Promise<{ workspaceId: string; key: string }> {
  const headers = { authorization: `Bearer ${BENCH_ENV.ADMIN_TOKEN}`, 'content-type': 'application/json' };
  const ws = (await (await fetch(`${base}/admin/v1/workspaces`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench', plan: 'enterprise' }) })).json()) as { id: string };
  const key = (await (await fetch(`${base}/admin/v1/workspaces/${ws.id}/keys`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench' }) })).json()) as { key: string };
  return { workspaceId: ws.id, key: key.key };
}

export function writeResult(name: string, data: unknown): void {
  mkdirSync(`${ROOT}bench/results`, { recursive: true });
  const file = `${ROOT}bench/results/${name}.json`;
  writeFileSync(file, JSON.stringify({ measuredAt: new Date().toISOString(), machine: { cores: cpus().length, memoryGiB: Math.round(totalmem() / 1024 ** 3) }, ...(data as object) }, null, 2) + '\n');
  console.log(`written ${file}`);
}

/**
 * Deletes the topics, consumer groups and registry subjects of one benchmark run (each run has its own
 * TOPIC_PREFIX so that no later run reads its scans); left behind, they pile up in the local broker and
 * registry run after run and slow them down.
 */
export async function deleteRunResources(prefix: string): Promise<void> {
  const config = loadConfig({ ...process.env, ...BENCH_ENV });
  await deleteOwned(config, underPrefix(prefix));
}

/** Linux's USER_HZ tick, what /proc counts CPU time in, in milliseconds (USER_HZ is 100 on every common build). */
export const TICK_MS = 10;

/** What /proc/<pid>/stat says of a process (Linux); throws when the process is gone. */
export interface ProcStat {
  pid: number;
  /** Its name (at most 15 characters). */
  comm: string;
  ppid: number;
  /** CPU time (user + system) used so far, in milliseconds. */
  cpuMs: number;
}

/** A process's stat, or a thread's given as `<pid>/task/<tid>` (cpu.ts threadsOf). */
export function procStat(pid: number | string): ProcStat {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { pid: typeof pid === 'number' ? pid : Number(pid.split('/').pop()), comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), ppid: Number(fields[1]), cpuMs: (Number(fields[11]) + Number(fields[12])) * TICK_MS };
}

/** CPU time (user + system) a process has used so far, in milliseconds. */
export const processCpuMs = (pid: number | string): number => procStat(pid).cpuMs;

/** The scans ClickHouse holds for a short ID (rows, and distinct scan ids), asked as the service asks (its URL, user, password and CA). */
export async function storedScansOf(config: ClickHouseConfig, database: string, shortId: string): Promise<{ rows: number; distinct: number }> {
  const clickhouse = createClickHouse(config, database);
  try {
    const [counts] = await clickhouse.rows<{ rows: string; distinct: string }>(sql`SELECT count() AS rows, uniqExact(scan_id) AS distinct FROM scans WHERE short_id = ${shortId}`);
    return { rows: Number(counts?.rows ?? 0), distinct: Number(counts?.distinct ?? 0) };
  } finally {
    await clickhouse.close();
  }
}
