// Starts one of the mail product's SMTP servers (the inbound report address, the
// relay) on host:port: a connection's error is logged, not thrown; a port that cannot
// be bound fails the start.
import type { AddressInfo } from 'node:net';
import type { SMTPServer } from 'smtp-server';
import type { Logger } from '../platform/logger.ts';

export interface ListeningSmtp {
  port: number;
  close(): Promise<void>;
}

export async function listenSmtp(server: SMTPServer, host: string, port: number, log: Logger, name: string): Promise<ListeningSmtp> {
  server.on('error', (err) => log.warn({ err }, `${name} connection error`));
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.server.address() as AddressInfo;
  log.info({ host, port: address.port }, `${name} listening`);
  return { port: address.port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
