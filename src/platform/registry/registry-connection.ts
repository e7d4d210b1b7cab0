// How the processes reach the schema registry: its URL, basic authentication when given
// (SCHEMA_REGISTRY_USERNAME/PASSWORD), and the CA of an https registry's server when it is not a
// public one (SCHEMA_REGISTRY_CA_FILE). Used by the registry client and the readiness check alike.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { Config } from '../config.ts';

export type RegistrySettings = Pick<Config, 'SCHEMA_REGISTRY_URL'> & Partial<Pick<Config, 'SCHEMA_REGISTRY_USERNAME' | 'SCHEMA_REGISTRY_PASSWORD' | 'SCHEMA_REGISTRY_CA_FILE'>>;

export interface RegistryConnection {
  url: string;
  auth?: { username: string; password: string };
  /** An https agent trusting SCHEMA_REGISTRY_CA_FILE; kept-alive connections either way. */
  agent: http.Agent;
}

export function registryConnection(c: RegistrySettings): RegistryConnection {
  const secure = c.SCHEMA_REGISTRY_URL.startsWith('https:');
  const agent = secure
    ? new https.Agent({ keepAlive: true, ...(c.SCHEMA_REGISTRY_CA_FILE ? { ca: readFileSync(c.SCHEMA_REGISTRY_CA_FILE, 'utf8') } : {}) })
    : new http.Agent({ keepAlive: true });
  return {
    url: c.SCHEMA_REGISTRY_URL,
    ...(c.SCHEMA_REGISTRY_USERNAME ? { auth: { username: c.SCHEMA_REGISTRY_USERNAME, password: c.SCHEMA_REGISTRY_PASSWORD ?? '' } } : {}),
    agent,
  };
}

/** A request to the registry: `target` a path under its URL, or a URL of the same server (its native API). */
export function registryRequest(connection: RegistryConnection, method: string, target: string | URL, timeoutMs = 10_000): Promise<{ status: number; body: string }> {
  const url = typeof target === 'string' ? new URL(`${connection.url.replace(/\/+$/, '')}${target}`) : target;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (connection.auth) headers.authorization = `Basic ${Buffer.from(`${connection.auth.username}:${connection.auth.password}`).toString('base64')}`;
  const request = url.protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent: connection.agent, headers, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

export const registryGet = (connection: RegistryConnection, path: string, timeoutMs?: number) => registryRequest(connection, 'GET', path, timeoutMs);
