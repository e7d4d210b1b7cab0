// A small authoritative DNS server on 127.0.0.1 (UDP, a free port) answering the TXT
// records a test sets, NXDOMAIN for other names; `silent` drops queries (a timeout).
import { createSocket } from 'node:dgram';
import dnsPacket from 'dns-packet';

export interface TestDns {
  server: string;
  /** TXT records by name; each record is a list of strings (as a zone file splits long ones). */
  txt: Map<string, string[][]>;
  silent: boolean;
  close: () => Promise<void>;
}

export async function startTestDns(): Promise<TestDns> {
  const socket = createSocket('udp4');
  const state: TestDns = { server: '', txt: new Map(), silent: false, close: () => new Promise((r) => socket.close(() => r())) };
  socket.on('message', (message, remote) => {
    if (state.silent) return;
    const query = dnsPacket.decode(message);
    const question = query.questions?.[0];
    if (!question) return;
    const records = question.type === 'TXT' ? state.txt.get(question.name.toLowerCase()) : undefined;
    const answer = dnsPacket.encode({
      id: query.id,
      type: 'response',
      flags: dnsPacket.AUTHORITATIVE_ANSWER | (records ? 0 : 3), // rcode 3: NXDOMAIN
      questions: [question],
      answers: (records ?? []).map((strings) => ({ type: 'TXT' as const, name: question.name, ttl: 60, data: strings.map((s) => Buffer.from(s)) })),
    });
    socket.send(answer, remote.port, remote.address);
  });
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', () => r()));
  state.server = `127.0.0.1:${socket.address().port}`;
  return state;
}
