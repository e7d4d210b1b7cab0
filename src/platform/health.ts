// Readiness checks of every dependency, each bounded by a timeout so a hung
// service shows as down instead of hanging the probe.
import type { Admin } from 'kafkajs';
import type { Pool } from './postgres/pool.ts';
import type { ClickHouse } from './clickhouse/client.ts';
import type { Redis } from './redis.ts';
import { registryGet, type RegistryConnection } from './registry/registry-connection.ts';
import { within } from './within.ts';

export interface CheckResult {
  name: string;
  ok: boolean;
  latencyMs: number;
  error?: string;
}

export type Check = { name: string; run: () => Promise<unknown> };

async function timed(check: Check, timeoutMs: number): Promise<CheckResult> {
  const started = performance.now();
  try {
    await within(check.run(), timeoutMs);
    return { name: check.name, ok: true, latencyMs: Math.round(performance.now() - started) };
  } catch (err) {
    return { name: check.name, ok: false, latencyMs: Math.round(performance.now() - started), error: (err as Error).message };
  }
}

export function runChecks(checks: readonly Check[], timeoutMs = 2000): Promise<CheckResult[]> {
  return Promise.all(checks.map((c) => timed(c, timeoutMs)));
}

export interface Dependencies {
  kafkaAdmin: Admin;
  registry: RegistryConnection;
  clickhouse: ClickHouse;
  pg: Pool;
  redis: Redis;
}

export function dependencyChecks(deps: Dependencies): Check[] {
  return [
    {
      name: 'kafka',
      run: () => deps.kafkaAdmin.describeCluster(),
    },
    {
      name: 'schemaRegistry',
      run: async () => {
        // The global compatibility level: a read of the registry's storage, a few bytes long (/subjects
        // lists every subject, a thousand and more on a shared registry, on every /readyz).
        const res = await registryGet(deps.registry, '/config');
        if (res.status < 200 || res.status >= 300) throw new Error(`HTTP ${res.status}`);
      },
    },
    {
      name: 'clickhouse',
      run: async () => {
        if (!(await deps.clickhouse.ping())) throw new Error('ping failed');
      },
    },
    { name: 'postgres', run: () => deps.pg.query('SELECT 1') },
    { name: 'redis', run: () => deps.redis.ping() },
  ];
}
