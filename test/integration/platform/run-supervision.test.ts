// The README's first command as a new user runs it, on empty databases: `bash
// infra/local/run.sh` prints the key and "Ready", the quick start's scan is
// recorded, and when the worker process dies (kill -9) run.sh says so, starts it
// again, and the next scan is recorded too; Ctrl-C (SIGINT) stops everything and
// exits 0.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually, testEnv } from '../../support/env.ts';
import { call } from '../../support/ingress.ts';
import { freshDatabases } from '../../support/fresh-databases.ts';
import { childPort } from '../../support/processes.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const fresh = freshDatabases('run');
const state = mkdtempSync(join(tmpdir(), 'linkmail-run-'));
let runSh: ChildProcess | undefined;
let output = '';

afterAll(async () => {
  // The whole process group: run.sh, its node processes and their tees.
  if (runSh?.exitCode === null) {
    process.kill(-runSh.pid!, 'SIGKILL');
    await new Promise((r) => runSh!.once('exit', r));
  }
  rmSync(state, { recursive: true, force: true });
  await fresh.drop();
}, 60_000);

async function printed(text: string, times = 1, timeoutMs = 240_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (output.split(text).length - 1 < times) {
    if (runSh!.exitCode !== null) throw new Error(`run.sh exited (${runSh!.exitCode}) before "${text}":\n${output.slice(-4000)}`);
    if (Date.now() > end) throw new Error(`no "${text}" (×${times}) within ${timeoutMs} ms:\n${output.slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('bash infra/local/run.sh', () => {
  it('records the quick start\'s scan on empty databases, restarts a killed worker process that then records the next, and stops on Ctrl-C', async () => {
    const port = childPort();
    const env = {
      ...testEnv(),
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      ...fresh.env(),
      HTTP_PORT: port,
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      LOCAL_STATE_DIR: state,
      ADMIN_TOKEN: '',
    };
    runSh = spawn('bash', ['infra/local/run.sh'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    runSh.stdout!.on('data', (d) => (output += d));
    runSh.stderr!.on('data', (d) => (output += d));

    await printed('Ready at');
    await printed('worker process ready');
    const key = readFileSync(join(state, 'local-api-key'), 'utf8').trim();
    const url = `http://127.0.0.1:${port}`;
    const created = await call(url, 'POST', '/api/v1/links', { key, body: { destination: 'https://example.com/', shortId: 'hello' } });
    expect(created.status).toBe(201);
    const scan = () => fetch(`${url}/hello`, { redirect: 'manual' }).then((r) => r.status);
    const totalScans = async () => (await call(url, 'GET', `/api/v1/links/${created.body.id}/analytics`, { key })).body.totalScans;
    expect(await scan()).toBe(302);
    await eventually(async () => (await totalScans()) === 1, 60_000);

    const workers = Number(/workers pid (\d+)/.exec(output)![1]);
    process.kill(workers, 'SIGKILL');
    await printed('the workers process exited (status 137); restarting it');
    await printed('worker process ready', 2);
    expect(await scan()).toBe(302);
    await eventually(async () => (await totalScans()) === 2, 90_000);

    runSh.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => runSh!.once('exit', (c) => resolve(c)));
    expect(code, output.slice(-2000)).toBe(0);
    // Nothing of it still answers.
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  }, 600_000);
});
