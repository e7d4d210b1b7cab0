// A real HTTPS webhook receiver on loopback that records every request and
// answers as the test tells it: a status, or hanging until released.
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TestCa } from './test-ca.ts';

export interface ReceivedRequest {
  at: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** What to answer to the n-th request (1-based): a status code, or 'hang' to hold it until release(). */
export type Answer = (n: number, request: ReceivedRequest) => number | 'hang';

export interface Receiver {
  url: string;
  received: ReceivedRequest[];
  /** Requests being held open right now. */
  open: () => number;
  answer: Answer;
  /** Answers every held request with this status. */
  release: (status?: number) => void;
  close: () => Promise<void>;
}

export async function startReceiver(ca: TestCa, answer: Answer = () => 200): Promise<Receiver> {
  const held = new Set<import('node:http').ServerResponse>();
  const received: ReceivedRequest[] = [];
  const receiver = { answer } as Receiver;
  const server = https.createServer({ key: ca.key, cert: ca.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request = { at: Date.now(), headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(request);
      const reply = receiver.answer(received.length, request);
      if (reply === 'hang') {
        held.add(res);
        res.on('close', () => held.delete(res));
        return;
      }
      res.writeHead(reply).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  Object.assign(receiver, {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    open: () => held.size,
    release: (status = 200) => {
      for (const res of held) res.writeHead(status).end();
      held.clear();
    },
    close: async () => {
      receiver.release(503);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
  return receiver;
}

/** The receivers a test file starts, each on demand, all closed together when the file is done. */
export class Receivers {
  private readonly ca: () => TestCa;
  private readonly started: Receiver[] = [];

  constructor(ca: () => TestCa) {
    this.ca = ca;
  }

  async start(answer?: Answer): Promise<Receiver> {
    const r = await startReceiver(this.ca(), answer);
    this.started.push(r);
    return r;
  }

  async closeAll(): Promise<void> {
    for (const r of this.started.splice(0)) await r.close();
  }
}
