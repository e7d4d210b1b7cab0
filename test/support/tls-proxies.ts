// TLS in front of the local stack's plaintext services, for tests of the connection settings that
// need no secured stack: each proxy ends TLS with the test CA's server certificate (127.0.0.1 and
// localhost) and passes the bytes on. Postgres asks for TLS inside its protocol (an SSLRequest
// answered 'S'), so its proxy answers that before the handshake; the registry's checks basic auth.
import { once } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import tls from 'node:tls';
import type { TestCa } from './links/test-ca.ts';

export interface Proxy {
  port: number;
  close: () => Promise<void>;
}

async function listening(server: net.Server): Promise<Proxy> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const sockets = new Set<net.Socket>();
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function pipeTo(socket: net.Socket, targetPort: number): void {
  const target = net.connect(targetPort, '127.0.0.1');
  socket.pipe(target).pipe(socket);
  const end = () => {
    socket.destroy();
    target.destroy();
  };
  socket.on('error', end).on('close', end);
  target.on('error', end).on('close', end);
}

/** TLS ended here, the plaintext passed to 127.0.0.1:targetPort (Redis, ClickHouse's HTTP port). */
export function tlsProxy(targetPort: number, ca: TestCa): Promise<Proxy> {
  const server = tls.createServer({ key: ca.key, cert: ca.cert }, (socket) => pipeTo(socket, targetPort));
  server.on('tlsClientError', () => {});
  return listening(server);
}

const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);

/** A Postgres server that takes only TLS: the SSLRequest answered 'S', the rest passed on in plaintext. */
export function postgresTlsProxy(targetPort: number, ca: TestCa): Promise<Proxy> {
  const server = net.createServer((socket) => {
    socket.on('error', () => socket.destroy());
    socket.once('data', (first: Buffer) => {
      if (!first.subarray(0, 8).equals(SSL_REQUEST)) {
        socket.destroy(); // a plaintext client: refused, as a hostssl-only server would
        return;
      }
      socket.write('S');
      const secure = new tls.TLSSocket(socket, { isServer: true, key: ca.key, cert: ca.cert });
      secure.on('error', () => socket.destroy());
      pipeTo(secure, targetPort);
    });
  });
  return listening(server);
}

/** The registry over HTTPS with basic authentication (401 without or with a wrong one). */
export function registryTlsProxy(target: URL, ca: TestCa, username: string, password: string): Promise<Proxy> {
  const expected = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  const server = https.createServer({ key: ca.key, cert: ca.cert }, (req, res) => {
    if (req.headers.authorization !== expected) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="registry"' }).end();
      return;
    }
    const { authorization: _a, host: _h, ...headers } = req.headers;
    const upstream = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('tlsClientError', () => {});
  return listening(server);
}
