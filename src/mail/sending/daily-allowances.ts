// The daily allowances a message is counted against before it goes out, each
// recipient one email, per UTC day of the sender's clock (spec, Limits): the
// sending domain's warm-up stage, the organization's cap and the platform's.
// All three are counted in one transaction, all or nothing, under row locks
// taken in one order, so no cap is exceeded whatever the number of senders.
import type { PoolClient } from 'pg';
import { effectiveDailySendCap, type Plan } from '../accounts/plans.ts';
import type { MailConfig } from '../config.ts';

export type SpentAllowance = 'domain' | 'organization' | 'platform';

export interface AllowanceSettings {
  /** A domain's allowance by stage: stage n applies after n earlier UTC days on which the domain sent. */
  warmupStages: number[];
  orgDefaultCap: number;
  platformCap: number;
}

export const allowanceSettings = (config: MailConfig): AllowanceSettings => ({
  warmupStages: config.MAIL_WARMUP_STAGES.split(',').map(Number),
  orgDefaultCap: config.ORG_DAILY_SEND_CAP,
  platformCap: config.PLATFORM_DAILY_SEND_CAP,
});

/** The UTC day of a moment, as Postgres's date. */
export const utcDay = (at: Date): string => at.toISOString().slice(0, 10);

/** Milliseconds from `at` to the next UTC midnight. */
export const untilNextUtcDay = (at: Date): number => Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1) - at.getTime();

/** An allowance a message did not fit today: `never` when it is larger than the allowance can ever be. */
export interface Refusal {
  allowance: SpentAllowance;
  limit: number;
  never: boolean;
}

/**
 * Counts `emails` against the day's allowances of the organization, its domain and the platform,
 * in the caller's transaction. Returns the allowance that would be exceeded (nothing counted), or
 * null when all three had room and now hold them. A message over the organization's or the
 * platform's cap never fits (only an operator changes those); over its domain's stage it waits
 * while a later stage would hold it (the domain climbs by sending its other mail).
 */
export async function countAgainstAllowances(
  db: PoolClient,
  settings: AllowanceSettings,
  day: string,
  organizationId: string,
  domain: string,
  emails: number,
): Promise<Refusal | null> {
  const { rows: [org] } = await db.query<{ plan: Plan; daily_send_cap: number | null }>('SELECT plan, daily_send_cap FROM mail_organizations WHERE id = $1', [organizationId]);
  const domainScope = `domain:${organizationId}:${domain}`;
  const { rows: [history] } = await db.query<{ days: number }>('SELECT count(*)::int AS days FROM mail_daily_usage WHERE scope = $1 AND day < $2 AND used > 0', [domainScope, day]);
  const stages = settings.warmupStages;
  const limits = new Map<string, { name: SpentAllowance; limit: number | null }>([
    [domainScope, { name: 'domain', limit: stages[Math.min(history!.days, stages.length - 1)]! }],
    [`org:${organizationId}`, { name: 'organization', limit: org ? effectiveDailySendCap(org.plan, org.daily_send_cap, settings.orgDefaultCap) : 0 }],
    ['platform', { name: 'platform', limit: settings.platformCap }],
  ]);
  // Rows made and locked in one order (sorted scopes): two senders never wait on each other in a circle.
  const scopes = [...limits.keys()].sort();
  await db.query('INSERT INTO mail_daily_usage (scope, day, used) SELECT s, $2, 0 FROM unnest($1::text[]) AS s ON CONFLICT DO NOTHING', [scopes, day]);
  const { rows } = await db.query<{ scope: string; used: number }>('SELECT scope, used FROM mail_daily_usage WHERE scope = ANY($1) AND day = $2 ORDER BY scope FOR UPDATE', [scopes, day]);
  for (const { scope, used } of rows) {
    const { name, limit } = limits.get(scope)!;
    if (limit !== null && used + emails > limit) {
      const largest = name === 'domain' ? Math.max(...stages) : limit;
      return { allowance: name, limit: emails > largest ? largest : limit, never: emails > largest };
    }
  }
  await db.query('UPDATE mail_daily_usage SET used = used + $3 WHERE scope = ANY($1) AND day = $2', [scopes, day, emails]);
  return null;
}
