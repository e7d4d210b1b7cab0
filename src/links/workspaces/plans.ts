// Plans of a workspace and what each may do (spec: API and MCP need Enterprise;
// shape masks and halftone art need Pro or Enterprise).
export const PLANS = ['free', 'pro', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export const canUseApi = (plan: Plan): boolean => plan === 'enterprise';
export const canUseAdvancedQrStyles = (plan: Plan): boolean => plan === 'pro' || plan === 'enterprise';
