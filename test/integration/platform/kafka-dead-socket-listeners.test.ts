// A broker that stays unreachable leaves no 'connect' listeners piling up on its closed sockets
// (patches/kafkajs+2.2.4+013+closed-socket-left-alone.patch). kafkajs's Connection.disconnect()
// called socket.unref() on a socket that had closed: Node then waits for a 'connect' that never
// comes, one listener per call, and each failed reconnect disconnects the broker's whole pool, so
// a closed socket of a client whose broker went away could gather 11, and Node printed
// "MaxListenersExceededWarning: 11 connect listeners added to [Socket]" in a green run.
// The broker goes away here as a client sees it: its connections are cut and new ones refused
// (kafkajs's socketFactory option routes them to a closed port).
import { connect, createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel, type ISocketFactory } from 'kafkajs';
import { eventually, testConfig } from '../../support/env.ts';
import { kafkaSecurity } from '../../../src/platform/kafka/security.ts';

const config = testConfig();
let closedPort = 0;
const warnings: Error[] = [];
const onWarning = (w: Error) => warnings.push(w);

beforeAll(async () => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closedPort = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  process.on('warning', onWarning);
});
afterAll(() => {
  process.off('warning', onWarning);
});

describe('a kafkajs client whose broker went away', () => {
  it('is disconnected again and again without piling connect listeners on its closed socket, and Node does not warn', async () => {
    let down = false;
    const sockets: Socket[] = [];
    const socketFactory: ISocketFactory = ({ host, port, onConnect }) => {
      const socket = down ? connect(closedPort, '127.0.0.1', onConnect) : connect(port, host, onConnect);
      socket.setKeepAlive(true, 60_000);
      sockets.push(socket);
      return socket;
    };
    const admin = new Kafka({ brokers: config.KAFKA_BROKERS.split(','), ...kafkaSecurity(config), logLevel: logLevel.NOTHING, socketFactory, retry: { retries: 0 } }).admin();
    await admin.connect();
    expect((await admin.describeCluster()).brokers.length).toBeGreaterThan(0);

    // The broker goes away: what is open is cut, what is opened next is refused.
    down = true;
    for (const socket of sockets) socket.destroy(new Error('the broker went away'));
    await eventually(async () => sockets.every((s) => s.closed), 5000);
    // As a consumer's restarts and failed reconnects disconnect its brokers' pools, each time.
    for (let i = 0; i < 12; i++) await admin.disconnect();
    await new Promise((resolve) => setImmediate(resolve));

    expect(sockets.map((s) => s.listenerCount('connect'))).toEqual(sockets.map(() => 0));
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message)).toEqual([]);
  });
});
