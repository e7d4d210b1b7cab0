// The README's first command as a new user runs it, on empty databases: `bash
// infra/local/run.sh` prints the key and "Ready", the quick start's scan is
// recorded, and when the worker process dies (kill -9) run.sh says so, starts it
// again, and the next scan is recorded too; Ctrl-C (SIGINT) stops everything and
// exits 0.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../../support/env.ts';
import { call } from '../../support/ingress.ts';
import { freshDatabases } from '../../support/fresh-databases.ts';
import { childPort } from '../../support/processes.ts';
import { newUserEnv, RunSh } from '../../support/run-sh.ts';

const fresh = freshDatabases('run');
const state = mkdtempSync(join(tmpdir(), 'linkmail-run-'));
let runSh: RunSh | undefined;

afterAll(async () => {
  await runSh?.kill();
  rmSync(state, { recursive: true, force: true });
  await fresh.drop();
}, 60_000);

describe('bash infra/local/run.sh', () => {
  it('records the quick start\'s scan on empty databases, restarts a killed worker process that then records the next, and stops on Ctrl-C', async () => {
    const port = childPort();
    runSh = new RunSh(newUserEnv(fresh.env(), port, state));

    await runSh.printed('Ready at');
    await runSh.printed('worker process ready');
    const key = readFileSync(join(state, 'local-api-key'), 'utf8').trim();
    const url = `http://127.0.0.1:${port}`;
    const created = await call(url, 'POST', '/api/v1/links', { key, body: { destination: 'https://example.com/', shortId: 'hello' } });
    expect(created.status).toBe(201);
    const scan = () => fetch(`${url}/hello`, { redirect: 'manual' }).then((r) => r.status);
    const totalScans = async () => (await call(url, 'GET', `/api/v1/links/${created.body.id}/analytics`, { key })).body.totalScans;
    expect(await scan()).toBe(302);
    await eventually(async () => (await totalScans()) === 1, 60_000);

    const workers = Number(/workers pid (\d+)/.exec(runSh.output)![1]);
    process.kill(workers, 'SIGKILL');
    await runSh.printed('the workers process exited (status 137); restarting it');
    await runSh.printed('worker process ready', 2);
    expect(await scan()).toBe(302);
    await eventually(async () => (await totalScans()) === 2, 90_000);

    expect(await runSh.interrupt(), runSh.output.slice(-2000)).toBe(0);
    // Nothing of it still answers.
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  }, 600_000);
});
