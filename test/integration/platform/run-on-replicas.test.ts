// The quick start, unchanged, on three ClickHouse replicas: `STACK_CLICKHOUSE_REPLICAS=3 bash
// infra/local/run.sh` on empty databases starts a ZooKeeper ensemble and three replicas, gives the
// service all three (CLICKHOUSE_URL, CLICKHOUSE_REPLICATED=on), and the printed curl's link, once
// scanned, shows in its analytics (totalScans 1) and is stored on every replica. The replicas are
// this file's own (a folder and ports of their own: STACK_DIR, STACK_CH_REPLICA_PORT), beside the
// stack the other files use; Ctrl-C stops run.sh, and the replicas are removed after.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { newTestReplicas, REPLICAS, type TestReplicas } from '../../support/clickhouse-replicas.ts';
import { replicasInStep } from '../../support/clickhouse-servers.ts';
import { eventually, testConfig } from '../../support/env.ts';
import { call } from '../../support/ingress.ts';
import { freshDatabases } from '../../support/fresh-databases.ts';
import { childPort } from '../../support/processes.ts';
import { newUserEnv, RunSh } from '../../support/run-sh.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const fresh = freshDatabases('runrepl');
const state = mkdtempSync(join(tmpdir(), 'linkmail-run-replicas-'));
let replicas: TestReplicas | undefined;
let runSh: RunSh | undefined;

afterAll(async () => {
  await runSh?.kill();
  // The ensemble and replicas run.sh started (stack.sh launches them in sessions of their own).
  await replicas?.release();
  rmSync(state, { recursive: true, force: true });
  await fresh.drop();
}, 60_000);

// The replicated stack is not offered with STACK_SECURE=1 (stack.sh refuses it), so a secured run has none to start.
describe.skipIf(process.env.STACK_SECURE === '1')('STACK_CLICKHOUSE_REPLICAS=3 bash infra/local/run.sh', () => {
  it('serves the quick start on three replicas of its own: the printed curl\'s link, scanned, counts in analytics and is on every replica', async () => {
    replicas = await newTestReplicas();
    const port = childPort();
    const env: Record<string, string> = {
      ...newUserEnv(fresh.env(), port, state),
      STACK_CLICKHOUSE_REPLICAS: '3',
      ...replicas.stackEnv,
      // The replicas' plain HTTP and user `default`; their addresses and Replicated* tables are run.sh's to set.
      CLICKHOUSE_USER: '',
      CLICKHOUSE_PASSWORD: '',
      CLICKHOUSE_CA_FILE: '',
    };
    for (const name of ['CLICKHOUSE_URL', 'CLICKHOUSE_REPLICATED', 'CLICKHOUSE_PASSWORD_FILE', 'STACK_SECURE']) delete env[name];
    runSh = new RunSh(env);

    // Within the test's own bound, so that a run.sh that hangs fails with its output.
    await runSh.printed('Ready at', 1, 90_000);
    await runSh.printed('worker process ready', 1, 90_000);
    // run.sh started the replicas, in this file's folder and on its ports.
    for (const r of REPLICAS) expect(runSh.output).toContain(`clickhouse-${r}: starting on ${replicas.urlOf(r).slice('http://'.length)} (http)`);

    // The quick start: the curl it printed creates a link; scanned, it redirects and counts.
    const curl = /^\s*(curl -s -X POST .*\\\n.*-d '\{"destination":"https:\/\/example\.com\/"\}')$/m.exec(runSh.output)?.[1];
    expect(curl, runSh.output.slice(-2000)).toBeDefined();
    const { stdout } = await promisify(execFile)('bash', ['-c', curl!.replace('\\\n', ' ')], { cwd: ROOT, timeout: 30_000 });
    const link = JSON.parse(stdout) as { id: string; shortUrl: string };
    expect(await fetch(link.shortUrl, { redirect: 'manual' }).then((r) => r.status)).toBe(302);
    const key = readFileSync(join(state, 'local-api-key'), 'utf8').trim();
    await eventually(async () => (await call(`http://127.0.0.1:${port}`, 'GET', `/api/v1/links/${link.id}/analytics`, { key })).body.totalScans === 1, 60_000);

    // Stored once on every replica, in a Replicated* table.
    const database = fresh.name;
    await replicasInStep(testConfig({ ...replicas.env, CLICKHOUSE_DATABASE: database }));
    for (const r of REPLICAS) {
      expect(await replicas.query(r, `SELECT engine FROM system.tables WHERE database = '${database}' AND name = 'scans'`), `replica ${r}`).toMatch(/^Replicated\w*MergeTree\n$/);
      expect(await replicas.query(r, `SELECT count(), uniqExact(scan_id) FROM ${database}.scans WHERE link_id = '${link.id}'`), `replica ${r}`).toBe('1\t1\n');
    }

    expect(await runSh.interrupt(), runSh.output.slice(-2000)).toBe(0);
  }, 150_000);
});
