// The configuration of this test run (its own databases and topic prefix), as set up by test/global-setup.ts.
import { inject } from 'vitest';
import { loadServiceConfig, type ServiceConfig } from '../../src/service.ts';

export function testEnv(): Record<string, string> {
  return { ...(process.env as Record<string, string>), ...inject('testEnv') };
}

export function testConfig(overrides: Record<string, string> = {}): ServiceConfig {
  return loadServiceConfig({ ...testEnv(), ...overrides });
}

/** Polls until `check` returns a truthy value, or fails after `timeoutMs` with the last value seen. */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 30_000, intervalMs = 200): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await check();
    if (last) return last;
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms (last value: ${JSON.stringify(last)})`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
