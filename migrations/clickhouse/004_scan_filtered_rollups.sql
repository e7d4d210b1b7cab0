-- Hourly and daily rollups for filtered analytics, fed like scans_dims (002) by
-- materialized views on every insert into scans, so they are exact too:
-- * scans_country_dims / scans_country_visitors answer a country filter;
-- * scans_link_dims_daily / scans_link_visitors_daily (by UTC day, sorted by
--   link first) answer a link filter (linkId, or the links a tag or campaign
--   selects), with or without a country, for the whole days of a range;
--   scans_link_dims / scans_link_visitors (by hour, sorted by time first) for
--   the hours before the first and after the last whole day, and hourly series.
-- Same long form and dimensions as scans_dims; empty values, which the queries
-- never rank (all but 'total' and 'referrer'), are not stored.
-- A file cut short is run again whole (see src/platform/clickhouse/migrate.ts),
-- so it starts by dropping whatever it creates.
DROP TABLE IF EXISTS {db}.scans_country_dims_mv;
DROP TABLE IF EXISTS {db}.scans_country_visitors_mv;
DROP TABLE IF EXISTS {db}.scans_link_dims_mv;
DROP TABLE IF EXISTS {db}.scans_link_visitors_mv;
DROP TABLE IF EXISTS {db}.scans_link_dims_daily_mv;
DROP TABLE IF EXISTS {db}.scans_link_visitors_daily_mv;
DROP TABLE IF EXISTS {db}.scans_country_dims;
DROP TABLE IF EXISTS {db}.scans_country_visitors;
DROP TABLE IF EXISTS {db}.scans_link_dims;
DROP TABLE IF EXISTS {db}.scans_link_visitors;
DROP TABLE IF EXISTS {db}.scans_link_dims_daily;
DROP TABLE IF EXISTS {db}.scans_link_visitors_daily;

CREATE TABLE IF NOT EXISTS {db}.scans_country_dims (
  workspace_id String,
  country      String,
  dim          String,
  hour         DateTime,
  is_bot       UInt8,
  value        String,
  scans        UInt64
) ENGINE = SummingMergeTree(scans)
PARTITION BY toYYYYMM(hour)
ORDER BY (workspace_id, country, dim, hour, is_bot, value);

CREATE TABLE IF NOT EXISTS {db}.scans_country_visitors (
  workspace_id String,
  country      String,
  hour         DateTime,
  is_bot       UInt8,
  visitors     AggregateFunction(uniqHLL12, String)
) ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (workspace_id, country, hour, is_bot);

CREATE TABLE IF NOT EXISTS {db}.scans_link_dims (
  workspace_id String,
  dim          String,
  link_id      String,
  hour         DateTime,
  country      String,
  is_bot       UInt8,
  value        String,
  scans        UInt64
) ENGINE = SummingMergeTree(scans)
PARTITION BY toYYYYMM(hour)
ORDER BY (workspace_id, dim, hour, link_id, country, is_bot, value);

CREATE TABLE IF NOT EXISTS {db}.scans_link_visitors (
  workspace_id String,
  link_id      String,
  hour         DateTime,
  country      String,
  is_bot       UInt8,
  visitors     AggregateFunction(uniqHLL12, String)
) ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (workspace_id, hour, link_id, country, is_bot);

CREATE TABLE IF NOT EXISTS {db}.scans_link_dims_daily (
  workspace_id String,
  dim          String,
  link_id      String,
  day          DateTime,
  country      String,
  is_bot       UInt8,
  value        String,
  scans        UInt64
) ENGINE = SummingMergeTree(scans)
PARTITION BY toYYYYMM(day)
ORDER BY (workspace_id, dim, link_id, day, country, is_bot, value);

CREATE TABLE IF NOT EXISTS {db}.scans_link_visitors_daily (
  workspace_id String,
  link_id      String,
  day          DateTime,
  country      String,
  is_bot       UInt8,
  visitors     AggregateFunction(uniqHLL12, String)
) ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (workspace_id, link_id, day, country, is_bot);

-- Backfill. Scans stored before this migration reach the rollups through the
-- INSERT … SELECT below, later ones through the views; each GROUP BY spills to
-- disk past 400 MB, so millions of scans fit the server's memory per query.
-- Exact when no scans are written while it runs: every process migrates before
-- it starts its workers, so stop the running scan sinks (scans wait in Kafka)
-- before starting the version that brings it.
INSERT INTO {db}.scans_country_dims
SELECT workspace_id, country, dim, toStartOfHour(ts) AS hour, is_bot, value, count() AS scans
FROM {db}.scans
ARRAY JOIN
  ['total', 'link', 'country', 'city', 'device', 'os', 'browser', 'referrer', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'] AS dim,
  ['', short_id, country, if(city = '', '', concat(country, '\t', city)), device, os, browser, referrer_host, utm_source, utm_medium, utm_campaign, utm_term, utm_content] AS value
WHERE value != '' OR dim IN ('total', 'referrer')
GROUP BY workspace_id, country, dim, hour, is_bot, value
SETTINGS max_bytes_before_external_group_by = 400000000;

INSERT INTO {db}.scans_country_visitors
SELECT workspace_id, country, toStartOfHour(ts) AS hour, is_bot, uniqHLL12State(visitor_id) AS visitors
FROM {db}.scans
GROUP BY workspace_id, country, hour, is_bot
SETTINGS max_bytes_before_external_group_by = 400000000;

INSERT INTO {db}.scans_link_dims
SELECT workspace_id, dim, link_id, toStartOfHour(ts) AS hour, country, is_bot, value, count() AS scans
FROM {db}.scans
ARRAY JOIN
  ['total', 'link', 'country', 'city', 'device', 'os', 'browser', 'referrer', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'] AS dim,
  ['', short_id, country, if(city = '', '', concat(country, '\t', city)), device, os, browser, referrer_host, utm_source, utm_medium, utm_campaign, utm_term, utm_content] AS value
WHERE value != '' OR dim IN ('total', 'referrer')
GROUP BY workspace_id, dim, link_id, hour, country, is_bot, value
SETTINGS max_bytes_before_external_group_by = 400000000;

INSERT INTO {db}.scans_link_visitors
SELECT workspace_id, link_id, toStartOfHour(ts) AS hour, country, is_bot, uniqHLL12State(visitor_id) AS visitors
FROM {db}.scans
GROUP BY workspace_id, link_id, hour, country, is_bot
SETTINGS max_bytes_before_external_group_by = 400000000;

INSERT INTO {db}.scans_link_dims_daily
SELECT workspace_id, dim, link_id, toStartOfDay(ts, 'UTC') AS day, country, is_bot, value, count() AS scans
FROM {db}.scans
ARRAY JOIN
  ['total', 'link', 'country', 'city', 'device', 'os', 'browser', 'referrer', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'] AS dim,
  ['', short_id, country, if(city = '', '', concat(country, '\t', city)), device, os, browser, referrer_host, utm_source, utm_medium, utm_campaign, utm_term, utm_content] AS value
WHERE value != '' OR dim IN ('total', 'referrer')
GROUP BY workspace_id, dim, link_id, day, country, is_bot, value
SETTINGS max_bytes_before_external_group_by = 400000000;

INSERT INTO {db}.scans_link_visitors_daily
SELECT workspace_id, link_id, toStartOfDay(ts, 'UTC') AS day, country, is_bot, uniqHLL12State(visitor_id) AS visitors
FROM {db}.scans
GROUP BY workspace_id, link_id, day, country, is_bot
SETTINGS max_bytes_before_external_group_by = 400000000;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.scans_country_dims_mv TO {db}.scans_country_dims AS
SELECT workspace_id, country, dim, toStartOfHour(ts) AS hour, is_bot, value, count() AS scans
FROM {db}.scans
ARRAY JOIN
  ['total', 'link', 'country', 'city', 'device', 'os', 'browser', 'referrer', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'] AS dim,
  ['', short_id, country, if(city = '', '', concat(country, '\t', city)), device, os, browser, referrer_host, utm_source, utm_medium, utm_campaign, utm_term, utm_content] AS value
WHERE value != '' OR dim IN ('total', 'referrer')
GROUP BY workspace_id, country, dim, hour, is_bot, value;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.scans_country_visitors_mv TO {db}.scans_country_visitors AS
SELECT workspace_id, country, toStartOfHour(ts) AS hour, is_bot, uniqHLL12State(visitor_id) AS visitors
FROM {db}.scans
GROUP BY workspace_id, country, hour, is_bot;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.scans_link_dims_mv TO {db}.scans_link_dims AS
SELECT workspace_id, dim, link_id, toStartOfHour(ts) AS hour, country, is_bot, value, count() AS scans
FROM {db}.scans
ARRAY JOIN
  ['total', 'link', 'country', 'city', 'device', 'os', 'browser', 'referrer', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'] AS dim,
  ['', short_id, country, if(city = '', '', concat(country, '\t', city)), device, os, browser, referrer_host, utm_source, utm_medium, utm_campaign, utm_term, utm_content] AS value
WHERE value != '' OR dim IN ('total', 'referrer')
GROUP BY workspace_id, dim, link_id, hour, country, is_bot, value;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.scans_link_visitors_mv TO {db}.scans_link_visitors AS
SELECT workspace_id, link_id, toStartOfHour(ts) AS hour, country, is_bot, uniqHLL12State(visitor_id) AS visitors
FROM {db}.scans
GROUP BY workspace_id, link_id, hour, country, is_bot;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.scans_link_dims_daily_mv TO {db}.scans_link_dims_daily AS
SELECT workspace_id, dim, link_id, toStartOfDay(ts, 'UTC') AS day, country, is_bot, value, count() AS scans
FROM {db}.scans
ARRAY JOIN
  ['total', 'link', 'country', 'city', 'device', 'os', 'browser', 'referrer', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'] AS dim,
  ['', short_id, country, if(city = '', '', concat(country, '\t', city)), device, os, browser, referrer_host, utm_source, utm_medium, utm_campaign, utm_term, utm_content] AS value
WHERE value != '' OR dim IN ('total', 'referrer')
GROUP BY workspace_id, dim, link_id, day, country, is_bot, value;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.scans_link_visitors_daily_mv TO {db}.scans_link_visitors_daily AS
SELECT workspace_id, link_id, toStartOfDay(ts, 'UTC') AS day, country, is_bot, uniqHLL12State(visitor_id) AS visitors
FROM {db}.scans
GROUP BY workspace_id, link_id, day, country, is_bot;
