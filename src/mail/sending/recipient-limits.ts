// The most recipients one message may have and still go out some day. A message is
// counted whole (each recipient one email) against its organization's daily cap, the
// platform's and its domain's warm-up stage (daily-allowances.ts), so a message larger
// than one of them would wait for ever. The API and the SMTP relay refuse such a
// message at once; against the first warm-up stage, since a new domain climbs only by
// sending and its first day allows no more. The sender ends a stored one that no
// longer fits (a cap lowered after it was accepted) as failed.
import type { Pool } from '../../platform/postgres/pool.ts';
import { effectiveDailySendCap, type Plan } from '../accounts/plans.ts';
import type { AllowanceSettings, SpentAllowance } from './daily-allowances.ts';

export interface DailyLimit {
  allowance: SpentAllowance;
  limit: number;
}

const NAMES: Record<SpentAllowance, string> = {
  organization: 'the organization\'s daily send cap',
  domain: 'the domain\'s warm-up stage',
  platform: 'the platform\'s daily send cap',
};

/** Why a message of `recipients` can never be sent, naming the limit. */
export const neverFits = (recipients: number, { allowance, limit }: DailyLimit, first = false): string =>
  `This message has ${recipients} recipients, each one email of the day, and ${first && allowance === 'domain' ? 'a new domain\'s first warm-up stage' : NAMES[allowance]} of ${limit} emails a day ` +
  `would never let it go out; send it as messages of at most ${limit} recipients.`;

/** The smallest limit a new message of the organization is counted against. */
export function smallestLimit(settings: AllowanceSettings, org: { plan: Plan; daily_send_cap: number | null }): DailyLimit {
  const limits: DailyLimit[] = [
    { allowance: 'domain', limit: settings.warmupStages[0]! },
    { allowance: 'platform', limit: settings.platformCap },
  ];
  const cap = effectiveDailySendCap(org.plan, org.daily_send_cap, settings.orgDefaultCap);
  if (cap !== null) limits.unshift({ allowance: 'organization', limit: cap });
  return limits.reduce((a, b) => (b.limit < a.limit ? b : a));
}

/** Reads the organization's cap for the API's and the relay's checks. */
export class RecipientLimits {
  private readonly pg: Pool;
  private readonly settings: AllowanceSettings;

  constructor(
    pg: Pool,
    settings: AllowanceSettings,
  ) {
    this.pg = pg;
    this.settings = settings;
  }

  async of(organizationId: string): Promise<DailyLimit> {
    const { rows: [org] } = await this.pg.query<{ plan: Plan; daily_send_cap: number | null }>('SELECT plan, daily_send_cap FROM mail_organizations WHERE id = $1', [organizationId]);
    return smallestLimit(this.settings, org ?? { plan: 'free', daily_send_cap: null });
  }
}
