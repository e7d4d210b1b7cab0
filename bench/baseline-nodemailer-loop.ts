// The baseline of the sender benchmark: a bare nodemailer loop handing the same
// message (DKIM-signed the same way) to the same sink, CONCURRENCY at a time,
// for SECONDS. Prints one JSON line: messages sent and this process's CPU.
import { generateKeyPairSync } from 'node:crypto';
import nodemailer from 'nodemailer';

const url = process.env.SINK_URL!;
const seconds = Number(process.env.SECONDS ?? 10);
const concurrency = Number(process.env.CONCURRENCY ?? 8);
const privateKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const transport = nodemailer.createTransport({ url, pool: true, maxConnections: concurrency } as never);
const end = Date.now() + seconds * 1000;
const cpuBefore = process.cpuUsage();
let sent = 0;
await Promise.all(Array.from({ length: concurrency }, async (_, lane) => {
  while (Date.now() < end) {
    await transport.sendMail({
      messageId: `<loop-${lane}-${sent}@bench.example.com>`,
      from: 'Bench <news@bench.example.com>',
      to: `reader-${sent}@example.net`,
      subject: 'Hello',
      html: '<p>Hello from the benchmark</p>',
      text: 'Hello from the benchmark',
      dkim: { domainName: 'bench.example.com', keySelector: 'bench', privateKey },
    });
    sent++;
  }
}));
const cpu = process.cpuUsage(cpuBefore);
transport.close();
console.log(JSON.stringify({ sent, seconds, cpuMs: (cpu.user + cpu.system) / 1000 }));
