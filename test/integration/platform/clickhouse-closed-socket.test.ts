// A read whose kept-alive socket the server closes as the query goes out on it (what ClickHouse's
// keep_alive_timeout does to a socket the client kept a moment too long) is sent again on a new
// socket, once; a write (exec, insert) is not. Through a TCP proxy in front of the stack's ClickHouse that can
// close every open connection as the next request arrives on it.
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { clickhouseUrls, createClickHouse, type ClickHouse } from '../../../src/platform/clickhouse/client.ts';
import { sql } from '../../../src/platform/clickhouse/literal.ts';
import { testConfig } from '../../support/env.ts';

let proxy: Server;
let clickhouse: ClickHouse;
/** Connections opened before this moment are closed when a request arrives on them. */
let closeOlderThan = 0;
let closed = 0;

beforeAll(async () => {
  const config = testConfig();
  // (The first server, when the run's ClickHouse is replicas.)
  const target = new URL(clickhouseUrls(config)[0]!);
  proxy = createServer((client: Socket) => {
    const opened = Date.now();
    const server = createConnection(Number(target.port), target.hostname);
    client.on('data', (chunk) => {
      if (opened < closeOlderThan) {
        closed++;
        client.destroy();
        server.destroy();
        return;
      }
      server.write(chunk);
    });
    server.pipe(client);
    client.on('error', () => server.destroy());
    server.on('error', () => client.destroy());
    client.on('close', () => server.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const port = (proxy.address() as { port: number }).port;
  clickhouse = createClickHouse({ ...config, CLICKHOUSE_URL: `http://127.0.0.1:${port}` });
});

afterAll(async () => {
  await clickhouse?.close();
  await new Promise((resolve) => proxy?.close(resolve));
});

it('sends a read again on a new socket when the server closes its kept-alive one, and a statement through exec (a write) not', async () => {
  expect(await clickhouse.rows(sql`SELECT 1 AS one`)).toEqual([{ one: 1 }]);
  closeOlderThan = Date.now() + 1;
  await new Promise((r) => setTimeout(r, 5));
  expect(await clickhouse.rows(sql`SELECT 2 AS two`)).toEqual([{ two: 2 }]);
  expect(closed).toBe(1);

  closeOlderThan = Date.now() + 1;
  await new Promise((r) => setTimeout(r, 5));
  await expect(clickhouse.exec(sql`SELECT 3`)).rejects.toThrow(/socket hang up|ECONNRESET/);
  expect(closed).toBe(2);
});
