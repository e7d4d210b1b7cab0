// The set-up of a test file about link webhooks: databases of its own (its webhook dispatcher would
// otherwise claim other files' due deliveries, which fail against their receivers, another test CA,
// and are retried late), a test CA its receivers serve with, an ingress, and a worker process running
// the webhook dispatcher beside the kinds that queue the file's deliveries.
import { afterAll, beforeAll } from 'vitest';
import { startIngress, type TestIngress } from '../ingress.ts';
import { startTs, stopChild, waitForOutput, type Child } from '../processes.ts';
import { useOwnDatabases } from '../own-databases.ts';
import { makeTestCa, type TestCa } from './test-ca.ts';
import { Receivers } from './webhook-receiver.ts';

export interface WebhookStack {
  /** The ingress, once the file's beforeAll has run. */
  readonly ingress: TestIngress;
  readonly receivers: Receivers;
}

/** Call at the top of the file: `kinds` run beside the dispatcher, `workerEnv` adds to its settings. */
export function useWebhookStack(kinds: string[], workerEnv: Record<string, string> = {}): WebhookStack {
  let ca: TestCa;
  let ingress: TestIngress | undefined;
  let worker: Child | undefined;
  const receivers = new Receivers(() => ca);
  useOwnDatabases();
  beforeAll(async () => {
    ca = makeTestCa();
    ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000', WEBHOOK_ALLOW_HOSTS: '127.0.0.1' });
    worker = startTs('workers/run.ts', ['webhooks', ...kinds], {
      LOG_LEVEL: 'info',
      WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
      WEBHOOK_CA_FILE: ca.caFile,
      WEBHOOK_POLL_MS: '50',
      ...workerEnv,
    });
    await waitForOutput(worker, 'worker process ready');
  }, 180_000);
  afterAll(async () => {
    await stopChild(worker);
    await receivers.closeAll();
    await ingress?.close();
  }, 30_000);
  return {
    get ingress() {
      if (!ingress) throw new Error('the ingress starts in beforeAll');
      return ingress;
    },
    receivers,
  };
}
