// A secured stack of the calling file's own (infra/local/stack.sh with STACK_SECURE=1): Kafka over
// SASL_SSL, the registry behind HTTPS with basic auth, ClickHouse over HTTPS with a password, and a
// Postgres and a Redis of its own over TLS with passwords, with a CA of its own; on ports of its own in
// 17000-18999 (below the test Kafka clusters' 19000-19965), beside the run's plaintext stack.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { alive, freePortBlock } from './own-services.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const STACKS = `${ROOT}.stack/test-secure`;
const run = promisify(execFile);
/** Ports from the base: Kafka and its controller, registry, Apicurio, ClickHouse HTTPS and native, Postgres, Redis, SMTP and its HTTP. */
const PORTS = 10;

export interface SecureStack {
  /** Every setting a client needs (its service.env): KAFKA_*, SCHEMA_REGISTRY_*, CLICKHOUSE_*, DATABASE_URL, REDIS_*, SMTP_URL. */
  env: Record<string, string>;
  /** The CA that signed every service's certificate. */
  caFile: string;
  /** The stack's SMTP sink's HTTP API (GET /messages?to=…), where SMTP_URL's mail lands. */
  smtpSinkUrl: string;
  /** Stops every service and removes its folder. */
  release: () => Promise<void>;
}

export async function startSecureStack(): Promise<SecureStack> {
  await removeLeftStacks();
  const base = await freePortBlock(17000, 18999, PORTS);
  const dir = `${STACKS}/${process.pid}-${base}`;
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}/owner`, String(process.pid));
  try {
    await stackSh(dir, base, 'start');
  } catch (err) {
    await stackSh(dir, base, 'stop').catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    env: readServiceEnv(`${dir}/secure/service.env`),
    caFile: `${dir}/secure/tls/ca.crt`,
    smtpSinkUrl: `http://127.0.0.1:${base + 9}`,
    release: async () => {
      await stackSh(dir, base, 'stop');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** NAME=value lines, no quotes (the format stack.sh writes for any client). */
function readServiceEnv(file: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const at = line.indexOf('=');
    if (at > 0) env[line.slice(0, at)] = line.slice(at + 1);
  }
  return env;
}

async function stackSh(dir: string, base: number, command: 'start' | 'stop'): Promise<void> {
  const ports = {
    STACK_KAFKA_PORT: base,
    STACK_REGISTRY_PORT: base + 2,
    STACK_APICURIO_PORT: base + 3,
    STACK_CH_HTTPS_PORT: base + 4,
    STACK_CH_TCP_PORT: base + 5,
    STACK_PG_PORT: base + 6,
    STACK_REDIS_PORT: base + 7,
    STACK_SMTP_PORT: base + 8,
    STACK_SMTP_HTTP_PORT: base + 9,
  };
  const env: NodeJS.ProcessEnv = { ...process.env, STACK_SECURE: '1', STACK_DIR: dir, STACK_KAFKA_NODES: '1', STACK_STOP_TIMEOUT: '5' };
  for (const [name, port] of Object.entries(ports)) env[name] = String(port);
  try {
    await run('bash', [`${ROOT}infra/local/stack.sh`, command], { cwd: ROOT, env, timeout: 300_000 });
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    throw new Error(`stack.sh ${command} for the test's secured stack failed:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}

/** Removes the stacks whose test process died before removing them. */
async function removeLeftStacks(): Promise<void> {
  if (!existsSync(STACKS)) return;
  for (const name of readdirSync(STACKS)) {
    const dir = `${STACKS}/${name}`;
    if (!existsSync(`${dir}/owner`) || alive(Number(readFileSync(`${dir}/owner`, 'utf8')))) continue;
    const base = Number(name.split('-')[1]);
    if (base) await stackSh(dir, base, 'stop');
    rmSync(dir, { recursive: true, force: true });
  }
}
