// How the dimension rollups store a scan's groups (migrations/clickhouse 006), for the
// queries that read them. Some groups are stored combined in one row, their values joined by
// tabs; the first combined row of a layout is stored once for every scan, so those rows also
// sum to the scans, and, where a rollup's key holds the link or the country, to the scans per
// link or country.

export interface RollupLayout {
  /** The combined rows that count every scan once: totals are their sums. */
  oneRowAScan: string;
  /** Combined rows: the groups each part of the value counts in, in order. */
  combined: Record<string, readonly string[]>;
}

/** scans_dims and scans_country_dims: many scans an hour and workspace, so the referrer apart (joined with the agent, their combinations would outnumber them). */
export const WORKSPACE_LAYOUT: RollupLayout = {
  oneRowAScan: 'agent',
  combined: { agent: ['device', 'os', 'browser'], utm: ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'] },
};

/** scans_link_dims and scans_link_dims_daily: few scans a link, country and hour or day, so one row a visit's device, OS, browser and referrer. */
export const LINK_LAYOUT: RollupLayout = {
  oneRowAScan: 'visit',
  combined: { visit: ['device', 'os', 'browser', 'referrer'], utm: ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'] },
};
