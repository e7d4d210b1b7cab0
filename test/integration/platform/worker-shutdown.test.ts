// The worker process with every kind stops cleanly on SIGTERM: all consumers
// leave their groups and the stores close within SHUTDOWN_TIMEOUT_MS (a timed
// out shutdown exits with code 1 instead of 0).
import { describe, expect, it } from 'vitest';
import { startTs, waitForOutput } from '../../support/processes.ts';

describe('workers/all.ts on SIGTERM', () => {
  it('stops every worker kind and exits 0', async () => {
    const workers = startTs('workers/all.ts', [], { LOG_LEVEL: 'info' });
    await waitForOutput(workers, 'worker process ready');
    workers.process.kill('SIGTERM');
    expect(await workers.exited).toEqual({ code: 0, signal: null });
    expect(workers.output()).toContain('shutdown complete');
    expect(workers.output()).not.toContain('shutdown timed out');
  }, 90_000);
});
