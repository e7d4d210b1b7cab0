// Error-level logs are for bugs. Refusals the service gives on purpose (4xx,
// and 503 render_busy when the renderer is saturated) are logged below error
// and without a stack trace, so an overloaded ingress does not fill its log
// with stack traces. The ingress runs as a child process (src/main.ts) so that
// its real log output is read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, client, freshIp, INGRESS_ENV } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { childPort, startTs, waitForOutput, type Child } from '../../support/processes.ts';

let child: Child;
let url: string;

beforeAll(async () => {
  const port = childPort();
  // One render thread and one queued task: a burst of QR requests is mostly refused with 503.
  child = startTs('src/main.ts', [], { ...INGRESS_ENV, HTTP_PORT: port, LOG_LEVEL: 'info', RENDER_THREADS: '1', RENDER_QUEUE: '1' });
  await waitForOutput(child, 'ingress listening');
  url = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  child?.process.kill('SIGTERM');
  await child?.exited;
});

const logLines = () =>
  child
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('logs of expected refusals', () => {
  it('logs an overloaded render\'s 503 render_busy and client errors without error level or stack', async () => {
    const ws = await workspaceWithKey(url);
    const api = client(url, ws.key);
    const link = await api.post('/api/v1/links', { destination: 'https://example.com/busy' });
    expect(link.status).toBe(201);
    const before = logLines().length;

    const answers = await Promise.all(Array.from({ length: 24 }, () => api.post('/api/v1/qr', { shortId: link.body.shortId, format: 'png', size: 1024 })));
    const busy = answers.filter((a) => a.status === 503);
    expect(busy.length).toBeGreaterThan(0);
    expect(busy.every((a) => a.body.error.code === 'render_busy')).toBe(true);
    expect(answers.filter((a) => a.status !== 200 && a.status !== 503)).toEqual([]);
    // Some client errors too: a bad key, a validation failure, an unknown link.
    expect((await call(url, 'GET', '/api/v1/links', { key: `lk_live_${'y'.repeat(32)}`, ip: freshIp() })).status).toBe(401);
    expect((await api.post('/api/v1/links', { destination: 'not a url' })).status).toBe(400);
    expect((await api.get('/api/v1/links/00000000-0000-4000-8000-000000000000')).status).toBe(404);

    // Give the process a moment to write its log lines.
    await new Promise((r) => setTimeout(r, 300));
    const lines = logLines().slice(before);
    expect(lines.filter((l) => (l.level as number) >= 50)).toEqual([]);
    expect(lines.filter((l) => JSON.stringify(l).includes('"stack"'))).toEqual([]);
    // The refusal is still visible in the log, as a warning that names its code.
    const warned = lines.filter((l) => l.level === 40 && l.code === 'render_busy');
    expect(warned.length).toBe(busy.length);
  });
});
