// The journal of an ingress that lives is never taken from it, however long it stalls: another
// ingress on the same journal directory adopts it only once its process has died. (An ingress
// whose event loop stalled past the lease, in a loaded run, had its journal adopted while alive:
// it then failed to refresh its lease every second, and wrote into a segment already shipped.)
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { INGRESS_ENV, startIngress, type TestIngress } from '../../support/ingress.ts';
import { eventually, testConfig } from '../../support/env.ts';
import { childPort, startTs, stopChild, waitForOutput, type Child } from '../../support/processes.ts';

const journalDir = `${testConfig().SCAN_JOURNAL_DIR}-owner-test-${process.pid}`;
// The shortest lease there is: a stall of two seconds outlives it.
const LEASE = { SCAN_JOURNAL_DIR: journalDir, SCAN_JOURNAL_LEASE_MS: '1000' };
let stalled: Child | undefined;
let heir: TestIngress | undefined;

afterAll(async () => {
  if (stalled) {
    stalled.process.kill('SIGCONT');
    await stopChild(stalled, 'SIGKILL');
  }
  await heir?.close();
  rmSync(journalDir, { recursive: true, force: true });
});

const journalOf = (child: Child) => readdirSync(journalDir).find((entry) => entry.startsWith(`${child.process.pid}-`));

describe('a scan journal', () => {
  it('is left to its stalled owner past the lease, and adopted once the owner is killed', async () => {
    stalled = startTs('src/main.ts', [], { ...INGRESS_ENV, ...LEASE, HTTP_PORT: childPort(), LOG_LEVEL: 'info' });
    await waitForOutput(stalled, 'ingress listening');
    const own = journalOf(stalled);
    expect(own).toBeDefined();

    stalled.process.kill('SIGSTOP');
    await new Promise((r) => setTimeout(r, 2000));
    // Its lease is older than 1 s; starting, the heir looks for orphans and must not take this one.
    heir = await startIngress(LEASE);
    expect(existsSync(`${journalDir}/${own}`)).toBe(true);
    stalled.process.kill('SIGCONT');
    await new Promise((r) => setTimeout(r, 1500));
    expect(stalled.output()).not.toContain('lease could not be refreshed');

    stalled.process.kill('SIGKILL');
    await stalled.exited;
    // The heir looks again every few seconds.
    await eventually(async () => !existsSync(`${journalDir}/${own}`), 20_000, 200);
    // Two ingress starts, one a process of its own.
  }, 120_000);
});
