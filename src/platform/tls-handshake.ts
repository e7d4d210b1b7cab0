// A TLS handshake alone, for a server that keeps silent when a plaintext one is spoken to in TLS
// (Redis reads the client's hello as the start of a command and waits for its end): the client's
// own error would only be a timeout, that looks like a server away.
import { connect, type ConnectionOptions } from 'node:tls';
import { tlsRefusal } from './connection-refusal.ts';

/** Undefined when the handshake succeeds, or when the server cannot be reached (not the settings' fault). */
export function tlsHandshakeRefusal(host: string, port: number, options: ConnectionOptions, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    let reached = false;
    const socket = connect({ host, port, ...(isIp(host) ? {} : { servername: host }), ...options });
    const done = (refusal: string | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(refusal);
    };
    const timer = setTimeout(() => done(reached ? `TLS asked but the server did not answer the handshake within ${timeoutMs / 1000} s (a plaintext server?)` : undefined), timeoutMs);
    socket.once('connect', () => (reached = true));
    socket.once('secureConnect', () => done(undefined));
    socket.once('error', (err) => done(tlsRefusal(err)));
  });
}

/**
 * Whether the server answers a TLS handshake (its certificate not checked): for a client told to
 * speak plaintext whose first request failed, to tell a TLS listener (Kafka's SSL and SASL_SSL ones
 * close the connection or keep silent) from a server away.
 */
export function speaksTls(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, ...(isIp(host) ? {} : { servername: host }), rejectUnauthorized: false });
    const done = (tls: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(tls);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once('secureConnect', () => done(true));
    socket.once('error', () => done(false));
  });
}

const isIp = (host: string): boolean => /^[\d.]+$/.test(host) || host.includes(':');
