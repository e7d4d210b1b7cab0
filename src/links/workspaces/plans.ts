// Plans of a workspace and what each may do (spec: API and MCP need Enterprise;
// shape masks and halftone art need Pro or Enterprise).
export const PLANS = ['free', 'pro', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export const canUseApi = (plan: Plan): boolean => plan === 'enterprise';
export const canUseAdvancedQrStyles = (plan: Plan): boolean => plan === 'pro' || plan === 'enterprise';

/** The plans whose workspaces may use the API (canUseApi), for a query that applies the rule in SQL. */
export const API_PLANS: readonly Plan[] = PLANS.filter(canUseApi);

/**
 * The API's live scan streams a workspace may hold open at once, over every ingress (docs/links-api.md,
 * "Live scans"). They need a plan with the API (a key of any other is refused before its limit is
 * looked at), so only those plans have one; the analytics pages' streams are bounded apart
 * (analytics-page/page-stream.ts).
 */
export const LIVE_STREAM_LIMITS: Readonly<Record<Plan, number>> = { free: 0, pro: 0, enterprise: 100 };
export const liveStreamLimit = (plan: Plan): number => LIVE_STREAM_LIMITS[plan];
