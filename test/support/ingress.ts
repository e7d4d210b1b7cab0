// An ingress for tests: the real server (buildIngress, as src/main.ts composes
// it) on the real stack, listening on a loopback port, with helpers to call it
// over real HTTP from many client IPs. Product helpers (a links workspace and
// key, say) live under test/support/<product>/.
import { randomBytes } from 'node:crypto';
import { buildIngress } from '../../src/ingress.ts';
import { startPlatform, type Platform } from '../../src/platform/platform.ts';
import { within } from '../../src/platform/within.ts';
import { testConfig } from './env.ts';
import { serviceTopics, type ServiceConfig } from '../../src/service.ts';

export const ADMIN_TOKEN = 'test-admin-token';

/** Test ingress settings: admin API on, loopback trusted as a proxy so tests can speak for many client IPs. */
export const INGRESS_ENV = { ADMIN_TOKEN, TRUSTED_PROXIES: '127.0.0.1' };

export interface TestIngress {
  platform: Platform<ServiceConfig>;
  app: Awaited<ReturnType<typeof buildIngress>>;
  url: string;
  close: () => Promise<void>;
}

export async function startIngress(overrides: Record<string, string> = {}): Promise<TestIngress> {
  const config = testConfig({ ...INGRESS_ENV, ...overrides });
  const platform = await startPlatform(config, { name: 'test-ingress', topics: serviceTopics, migrate: false });
  const app = await buildIngress(platform, config);
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    platform,
    app,
    url,
    // Bounded as a process's shutdown is (SHUTDOWN_TIMEOUT_MS, plus the HTTP server's close): a close that
    // hangs fails the file with the part it is stuck at, instead of running out a hook's time unexplained.
    close: async () => {
      let stage = 'the HTTP server (open requests, onClose hooks)';
      const closing = (async () => {
        await app.close();
        stage = 'the platform';
        await platform.shutdown.run('test done');
      })();
      const boundMs = config.SHUTDOWN_TIMEOUT_MS + 15_000;
      await within(closing, boundMs, () => `the test ingress did not close within ${boundMs} ms: stuck at ${stage}${platform.shutdown.closing ? ` (${platform.shutdown.closing})` : ''}`);
    },
  };
}

const hex16 = () => randomBytes(2).toString('hex');

/**
 * A client address from the IPv6 documentation range, sent as X-Forwarded-For: each call is in a
 * /64 of its own (random 3rd and 4th groups), since per-IP limits count an IPv6 client by its /64.
 */
export const freshIp = (): string => `2001:db8:${hex16()}:${hex16()}::${hex16()}`;

/** Another address in the same /64 as `ip` (a client rotating through its network). */
export const sameNetwork = (ip: string): string => `${ip.split('::')[0]}:${hex16()}:${hex16()}:${hex16()}:${hex16()}`;

export interface Response<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export async function call<T = any>(baseUrl: string, method: string, path: string, options: { key?: string; body?: unknown; raw?: string; ip?: string; headers?: Record<string, string> } = {}): Promise<Response<T>> {
  const headers: Record<string, string> = { 'x-forwarded-for': options.ip ?? freshIp(), ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | undefined;
  if (options.raw !== undefined) {
    body = options.raw;
    headers['content-type'] ??= 'application/json';
  } else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, headers: res.headers, body: parsed as T };
}

/** A client bound to one ingress, one key and one client IP. */
export function client(baseUrl: string, key?: string, ip = freshIp()) {
  const go = <T = any>(method: string, path: string, body?: unknown) => call<T>(baseUrl, method, path, { key, body, ip });
  return {
    ip,
    get: <T = any>(path: string) => go<T>('GET', path),
    post: <T = any>(path: string, body?: unknown) => go<T>('POST', path, body),
    patch: <T = any>(path: string, body?: unknown) => go<T>('PATCH', path, body),
    delete: <T = any>(path: string) => go<T>('DELETE', path),
    raw: <T = any>(method: string, path: string, raw: string) => call<T>(baseUrl, method, path, { key, raw, ip }),
  };
}
