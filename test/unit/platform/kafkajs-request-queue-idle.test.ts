// patches/kafkajs+2.2.4+015: a connection's request queue sets no timer while nothing waits in it.
// Before, every answered request started a check that set the next one a millisecond later, forever
// (tulios/kafkajs#1556): the idle ingress spent a third of its CPU in these timers.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const RequestQueue = require('kafkajs/src/network/requestQueue') as new (options: Record<string, unknown>) => {
  push(request: { entry: { correlationId: number; resolve(): void; reject(): void }; expectResponse: boolean; sendRequest: () => void }): void;
  fulfillRequest(response: { correlationId: number; payload: unknown; size: number }): void;
  checkPendingRequests(): void;
  maybeThrottle(ms: number): void;
  destroy(): void;
  pending: unknown[];
  throttleCheckTimeoutId: unknown;
};

const logger = { debug() {}, info() {}, warn() {}, error() {} };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function queue() {
  const q = new RequestQueue({ maxInFlightRequests: 1, requestTimeout: 30_000, enforceRequestTimeout: false, clientId: 'test', broker: 'b:1', logger });
  let checks = 0;
  const check = q.checkPendingRequests.bind(q);
  q.checkPendingRequests = () => {
    checks++;
    check();
  };
  const sent: number[] = [];
  const request = (correlationId: number) => ({ entry: { correlationId, resolve() {}, reject() {} }, expectResponse: true, sendRequest: () => sent.push(correlationId) });
  return { q, sent, request, checks: () => checks };
}

describe('kafkajs request queue (patch 015)', () => {
  it('sets no timer once its requests are answered, however long it then idles', async () => {
    const { q, sent, request, checks } = queue();
    q.push(request(1));
    q.fulfillRequest({ correlationId: 1, payload: null, size: 0 });
    expect(sent).toEqual([1]);
    const before = checks();
    await sleep(200);
    // One check per answer, none from timers (about 200 of them before the patch).
    expect(checks() - before).toBe(0);
    expect(q.throttleCheckTimeoutId).toBeNull();
    q.destroy();
  });

  it('still sends a request that waited for a free slot, and one that waited out a throttle', async () => {
    const { q, sent, request } = queue();
    q.push(request(1));
    q.push(request(2));
    expect(sent).toEqual([1]);
    q.fulfillRequest({ correlationId: 1, payload: null, size: 0 });
    expect(sent).toEqual([1, 2]);
    q.fulfillRequest({ correlationId: 2, payload: null, size: 0 });
    // The broker asks the client to hold back for 50 ms: the next request waits, then goes by a timer.
    q.maybeThrottle(50);
    q.push(request(3));
    expect(sent).toEqual([1, 2]);
    await sleep(120);
    expect(sent).toEqual([1, 2, 3]);
    q.fulfillRequest({ correlationId: 3, payload: null, size: 0 });
    await sleep(30);
    expect(q.throttleCheckTimeoutId).toBeNull();
    q.destroy();
  });
});
