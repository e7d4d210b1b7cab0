// Closing the HTTP server while an answer is still being made: that answer says `Connection: close` and
// its connection ends with it, and the close completes, instead of waiting out the keep-alive timeout
// (Node's close ends only the connections idle at that moment). A bare server, no stack.
import { request, Agent } from 'node:http';
import { afterEach, expect, it } from 'vitest';
import { buildServer, type App } from '../../../src/platform/http/server.ts';
import { createLogger } from '../../../src/platform/logger.ts';

let app: App | undefined;
const agent = new Agent({ keepAlive: true });
afterEach(async () => {
  agent.destroy();
  await app?.close();
});

it('ends a kept-alive connection whose answer was in flight at the close, and closes', async () => {
  app = await buildServer({
    log: createLogger({ LOG_LEVEL: 'silent' }),
    checks: [],
    openapi: { title: 'Test', version: '1.0.0', description: 'Test.', serverUrl: 'http://localhost', products: [] },
  });
  let arrived!: () => void;
  const inRoute = new Promise<void>((r) => (arrived = r));
  app.get('/slow', { schema: { hide: true } }, async () => {
    arrived();
    await new Promise((r) => setTimeout(r, 300));
    return { ok: true };
  });
  // Longer than the test's own bound: a close that waited for it would fail the test by its timeout.
  app.server.keepAliveTimeout = 60_000;
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as { port: number };
  const answered = new Promise<{ status: number; connection: string | undefined; socketClosed: Promise<void> }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/slow', agent }, (res) => {
      const socketClosed = new Promise<void>((closed) => res.socket.once('close', () => closed()));
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, socketClosed }));
    });
    req.on('error', reject);
    req.end();
  });
  await inRoute;
  const closed = app.close();
  const { status, connection, socketClosed } = await answered;
  expect(status).toBe(200);
  expect(connection).toBe('close');
  await socketClosed;
  await closed;
}, 10_000);
