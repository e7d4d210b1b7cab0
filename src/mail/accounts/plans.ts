// Mail plans and what they mean for the organization's daily send cap (spec, Limits:
// "Organization daily cap"). The sender enforces the cap; here it is only computed.
export const PLANS = ['free', 'pro'] as const;
export type Plan = (typeof PLANS)[number];

/** The most a plan may send per UTC day whatever the organization's own cap says; null: no ceiling. */
export const PLAN_CEILING: Record<Plan, number | null> = { free: 100, pro: null };

/** The default cap of a plan without a ceiling (spec: 20,000 per day, or ORG_DAILY_SEND_CAP). */
export const DEFAULT_DAILY_SEND_CAP = 20_000;

/**
 * The cap that applies, in emails (recipients) per UTC day; null means no cap.
 * With a ceiling: blank or 0 means the ceiling and a value can only lower it.
 * Without: blank is the default and 0 is no cap.
 */
export function effectiveDailySendCap(plan: Plan, cap: number | null, defaultCap = DEFAULT_DAILY_SEND_CAP): number | null {
  const ceiling = PLAN_CEILING[plan];
  if (ceiling !== null) return cap ? Math.min(cap, ceiling) : ceiling;
  if (cap === null) return defaultCap;
  return cap === 0 ? null : cap;
}
