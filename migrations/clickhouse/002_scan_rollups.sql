-- Hourly rollups of scans for the workspace summary, fed by materialized views
-- on every insert into scans. The scan sink inserts each scan exactly once
-- (it checks for the scan ids under a per-partition lock), so the rollups are
-- exact. Dimensions in long form: one row per (hour, dimension, value).
CREATE TABLE IF NOT EXISTS {db}.scans_dims (
  workspace_id String,
  hour         DateTime,
  is_bot       UInt8,
  dim          String,
  value        String,
  scans        UInt64
) ENGINE = SummingMergeTree(scans)
PARTITION BY toYYYYMM(hour)
ORDER BY (workspace_id, dim, hour, is_bot, value);

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.scans_dims_mv TO {db}.scans_dims AS
SELECT workspace_id, toStartOfHour(ts) AS hour, is_bot, dim, value, count() AS scans
FROM {db}.scans
ARRAY JOIN
  ['total', 'link', 'country', 'city', 'device', 'os', 'browser', 'referrer', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'] AS dim,
  ['', short_id, country, if(city = '', '', concat(country, '\t', city)), device, os, browser, referrer_host, utm_source, utm_medium, utm_campaign, utm_term, utm_content] AS value
GROUP BY workspace_id, hour, is_bot, dim, value;

CREATE TABLE IF NOT EXISTS {db}.scans_visitors (
  workspace_id String,
  hour         DateTime,
  is_bot       UInt8,
  visitors     AggregateFunction(uniqHLL12, String)
) ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (workspace_id, hour, is_bot);

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.scans_visitors_mv TO {db}.scans_visitors AS
SELECT workspace_id, toStartOfHour(ts) AS hour, is_bot, uniqHLL12State(visitor_id) AS visitors
FROM {db}.scans
GROUP BY workspace_id, hour, is_bot;
