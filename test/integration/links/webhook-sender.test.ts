// The webhook sender against real HTTPS receivers: timeouts, redirects,
// private addresses and plain HTTP are failures, never hangs or crashes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookSender } from '../../../src/platform/webhooks/webhook-sender.ts';
import { makeTestCa, type TestCa } from '../../support/links/test-ca.ts';
import { startReceiver, type Receiver } from '../../support/links/webhook-receiver.ts';

let ca: TestCa;
let receiver: Receiver;

beforeAll(async () => {
  ca = makeTestCa();
  receiver = await startReceiver(ca);
});
afterAll(async () => receiver?.close());

describe('webhook sender', () => {
  it('maps answers: 2xx acknowledged, 4xx rejected, 3xx and 5xx failed', async () => {
    const send = createWebhookSender({ timeoutMs: 2000, allowHosts: ['127.0.0.1'], caFile: ca.caFile });
    for (const [status, outcome] of [[200, 'acknowledged'], [299, 'acknowledged'], [400, 'rejected'], [429, 'rejected'], [302, 'failed'], [500, 'failed'], [503, 'failed']] as const) {
      receiver.answer = () => status;
      expect(await send(receiver.url, '{}', {})).toMatchObject({ outcome, statusCode: status });
    }
    expect(receiver.received.at(-1)!.headers['content-type']).toBe('application/json');
  });

  it('gives up on a receiver that does not answer within the timeout', async () => {
    const send = createWebhookSender({ timeoutMs: 300, allowHosts: ['127.0.0.1'], caFile: ca.caFile });
    receiver.answer = () => 'hang';
    expect(await send(receiver.url, '{}', {})).toEqual({ outcome: 'failed', statusCode: null, error: 'no answer within 300 ms' });
    receiver.release();
  });

  it('refuses private addresses unless allowed, plain HTTP, and certificates it does not trust', async () => {
    receiver.answer = () => 200;
    const before = receiver.received.length;
    const strict = createWebhookSender({ timeoutMs: 2000, allowHosts: [], caFile: ca.caFile });
    expect(await strict(receiver.url, '{}', {})).toMatchObject({ outcome: 'failed', error: '127.0.0.1 is not a public address' });
    // What a name resolved to stays ours: the log a workspace reads does not name the address.
    expect(await strict(receiver.url.replace('127.0.0.1', 'localhost'), '{}', {})).toMatchObject({ outcome: 'failed', error: 'localhost does not resolve to a public address' });
    expect(await strict('https://no-such-host.invalid/x', '{}', {})).toMatchObject({ outcome: 'failed', error: 'no-such-host.invalid could not be resolved' });
    const allowed = createWebhookSender({ timeoutMs: 2000, allowHosts: ['127.0.0.1'], caFile: ca.caFile });
    expect(await allowed(receiver.url.replace('https:', 'http:'), '{}', {})).toMatchObject({ outcome: 'failed', error: 'webhook endpoints must use https' });
    const untrusting = createWebhookSender({ timeoutMs: 2000, allowHosts: ['127.0.0.1'] });
    expect(await untrusting(receiver.url, '{}', {})).toMatchObject({ outcome: 'failed', statusCode: null });
    expect(receiver.received.length).toBe(before);
  });
});
