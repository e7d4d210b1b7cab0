// The configuration of this test run (its own databases and topic prefix), as set up by test/global-setup.ts.
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, inject } from 'vitest';
import { loadServiceConfig, type ServiceConfig } from '../../src/service.ts';

const TEST_DIR = fileURLToPath(new URL('../', import.meta.url));

// Set by useOwnDatabases (own-databases.ts) for a file with databases of its own; each file runs in a fresh module graph.
let databasesOfThisFile: Record<string, string> | undefined;

export function useDatabasesOfThisFile(settings: Record<string, string> | undefined): void {
  databasesOfThisFile = settings;
}

/**
 * The run's settings, with a topic prefix of this test file's own under the run's
 * (`test-1a2b3c4d.links-analytics`): files that run side by side then share no
 * topic, consumer group or registry subject, and the run's teardown still finds
 * them all by the run's prefix. Processes a test starts get the same settings.
 */
export function testEnv(): Record<string, string> {
  const env: Record<string, string> = { ...(process.env as Record<string, string>), ...inject('testEnv'), ...databasesOfThisFile };
  const file = expect.getState().testPath;
  if (file) env.TOPIC_PREFIX = `${env.TOPIC_PREFIX}.${fileSlug(file)}`;
  return env;
}

/** test/integration/links/analytics.test.ts → links-analytics; test/unit/platform/config.test.ts → unit-platform-config. */
function fileSlug(file: string): string {
  return relative(TEST_DIR, file)
    .replace(/^integration\//, '')
    .replace(/\.test\.ts$/, '')
    .replace(/[^A-Za-z0-9-]+/g, '-');
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
