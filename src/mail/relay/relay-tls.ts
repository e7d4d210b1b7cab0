// The SMTP relay's STARTTLS certificate: the configured PEM files, or outside
// production a self-signed one for localhost made once with the openssl CLI and
// kept in .stack/relay-tls (made in a folder of its own and renamed, so two
// ingresses starting together both read a whole pair).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { MailConfig } from '../config.ts';

export interface RelayTls {
  key: Buffer;
  cert: Buffer;
}

const LOCAL_DIR = '.stack/relay-tls';

export function relayTls(config: Pick<MailConfig, 'MAIL_RELAY_TLS_KEY_FILE' | 'MAIL_RELAY_TLS_CERT_FILE'> & { NODE_ENV: string }): RelayTls {
  if (config.MAIL_RELAY_TLS_KEY_FILE && config.MAIL_RELAY_TLS_CERT_FILE) {
    return { key: readFileSync(config.MAIL_RELAY_TLS_KEY_FILE), cert: readFileSync(config.MAIL_RELAY_TLS_CERT_FILE) };
  }
  // Checked by the ingress that runs the relay, not by the configuration every process shares (workers run none).
  if (config.NODE_ENV === 'production') throw new Error('MAIL_RELAY_TLS_KEY_FILE and MAIL_RELAY_TLS_CERT_FILE must be set in production (or MAIL_RELAY_SMTP_PORT=-1 to run no SMTP relay)');
  if (!existsSync(join(LOCAL_DIR, 'cert.pem'))) {
    const tmp = `${LOCAL_DIR}.${process.pid}`;
    mkdirSync(tmp, { recursive: true });
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '3650', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', join(tmp, 'key.pem'), '-out', join(tmp, 'cert.pem'),
    ], { stdio: 'ignore' });
    // Another process that made its pair first wins; this one's is dropped.
    try {
      renameSync(tmp, LOCAL_DIR);
    } catch {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  return { key: readFileSync(join(LOCAL_DIR, 'key.pem')), cert: readFileSync(join(LOCAL_DIR, 'cert.pem')) };
}
