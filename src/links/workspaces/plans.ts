// Plans of a workspace and what each may do (spec: API and MCP need Enterprise;
// shape masks and halftone art need Pro or Enterprise).
export const PLANS = ['free', 'pro', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export const canUseApi = (plan: Plan): boolean => plan === 'enterprise';
export const canUseAdvancedQrStyles = (plan: Plan): boolean => plan === 'pro' || plan === 'enterprise';

/**
 * Live scan streams a workspace may hold open at once, over every ingress (docs/links-api.md,
 * "Live scans"). The API's streams need Enterprise; the others are for shared pages' streams.
 */
export const LIVE_STREAM_LIMITS: Readonly<Record<Plan, number>> = { free: 5, pro: 25, enterprise: 100 };
export const liveStreamLimit = (plan: Plan): number => LIVE_STREAM_LIMITS[plan];
