// How the dimension rollups store a scan's groups (migrations/clickhouse 006), for the
// queries that read them.

/** The rollup rows that count every scan once (its agent): totals are their sums (migration 006). */
export const ONE_ROW_A_SCAN = 'agent';

/** Rows stored combined (migration 006): the groups each part of the value counts in, in order. */
export const COMBINED = {
  agent: ['device', 'os', 'browser'],
  utm: ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'],
} as const;
