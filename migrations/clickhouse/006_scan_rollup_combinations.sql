-- Fewer rollup rows a scan (issue 34). ClickHouse's cost of a scan is mostly the rollup rows it
-- writes and merges (about 2 µs each, bench/scan-storage.bench.ts), and the four dimension rollups
-- wrote up to 13 rows a scan. Now (src/links/analytics/rollup-rows.ts):
-- * device, OS and browser are one `agent` row (device\tos\tbrowser); in the link rollups, which
--   hold few scans a key, with the referrer host too, one `visit` row (device\tos\tbrowser\treferrer);
--   the five UTM parameters are one `utm` row (source\tmedium\tcampaign\tterm\tcontent, none when
--   all are empty). The queries split them and sum each part (analytics-queries.ts), which counts
--   what the separate rows did. A tab inside a part is stored (and so reported) as a space, so the
--   parts split where they were joined.
-- * no `total` rows: every scan has exactly one `agent` (or `visit`) row, and the joined value is
--   never empty, so those rows sum to the scans (series, lifetime scans);
-- * a rollup whose key holds the link or the country does not store them again as `link` or
--   `country` rows: its `visit` rows, summed by link or country, say the same (scans_country_dims
--   keeps `link`, whose value is the short ID, and scans_dims keeps both).
-- Same tables and sorting keys as 002 and 004; their rows are rebuilt from the scans table, like
-- 004's backfill (stop the running scan sinks first: scans wait in Kafka meanwhile; and the
-- ingresses if links have scan limits: they count from scans_link_dims_daily, empty meanwhile). A file cut
-- short is run again whole, so it starts by dropping whatever it creates.

DROP TABLE IF EXISTS {db}.scans_dims_mv;
DROP TABLE IF EXISTS {db}.scans_country_dims_mv;
DROP TABLE IF EXISTS {db}.scans_link_dims_mv;
DROP TABLE IF EXISTS {db}.scans_link_dims_daily_mv;
DROP TABLE IF EXISTS {db}.scans_dims;
DROP TABLE IF EXISTS {db}.scans_country_dims;
DROP TABLE IF EXISTS {db}.scans_link_dims;
DROP TABLE IF EXISTS {db}.scans_link_dims_daily;

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

INSERT INTO {db}.scans_dims
SELECT workspace_id, toStartOfHour(ts) AS hour, is_bot, dim, value, count() AS scans
FROM {db}.scans
ARRAY JOIN
  ['link', 'country', 'city', 'agent', 'referrer', 'utm'] AS dim,
  [short_id, country, if(city = '', '', concat(country, '\t', city)), concat(replaceAll(device, '\t', ' '), '\t', replaceAll(os, '\t', ' '), '\t', replaceAll(browser, '\t', ' ')), referrer_host, if(concat(utm_source, utm_medium, utm_campaign, utm_term, utm_content) = '', '', concat(replaceAll(utm_source, '\t', ' '), '\t', replaceAll(utm_medium, '\t', ' '), '\t', replaceAll(utm_campaign, '\t', ' '), '\t', replaceAll(utm_term, '\t', ' '), '\t', replaceAll(utm_content, '\t', ' ')))] AS value
WHERE value != '' OR dim = 'referrer'
GROUP BY workspace_id, hour, is_bot, dim, value
SETTINGS max_bytes_before_external_group_by = 400000000;

INSERT INTO {db}.scans_country_dims
SELECT workspace_id, country, dim, toStartOfHour(ts) AS hour, is_bot, value, count() AS scans
FROM {db}.scans
ARRAY JOIN
  ['link', 'city', 'agent', 'referrer', 'utm'] AS dim,
  [short_id, if(city = '', '', concat(country, '\t', city)), concat(replaceAll(device, '\t', ' '), '\t', replaceAll(os, '\t', ' '), '\t', replaceAll(browser, '\t', ' ')), referrer_host, if(concat(utm_source, utm_medium, utm_campaign, utm_term, utm_content) = '', '', concat(replaceAll(utm_source, '\t', ' '), '\t', replaceAll(utm_medium, '\t', ' '), '\t', replaceAll(utm_campaign, '\t', ' '), '\t', replaceAll(utm_term, '\t', ' '), '\t', replaceAll(utm_content, '\t', ' ')))] AS value
WHERE value != '' OR dim = 'referrer'
GROUP BY workspace_id, country, dim, hour, is_bot, value
SETTINGS max_bytes_before_external_group_by = 400000000;

INSERT INTO {db}.scans_link_dims
SELECT workspace_id, dim, link_id, toStartOfHour(ts) AS hour, country, is_bot, value, count() AS scans
FROM {db}.scans
ARRAY JOIN
  ['city', 'visit', 'utm'] AS dim,
  [ if(city = '', '', concat(country, '\t', city)), concat(replaceAll(device, '\t', ' '), '\t', replaceAll(os, '\t', ' '), '\t', replaceAll(browser, '\t', ' '), '\t', replaceAll(referrer_host, '\t', ' ')), if(concat(utm_source, utm_medium, utm_campaign, utm_term, utm_content) = '', '', concat(replaceAll(utm_source, '\t', ' '), '\t', replaceAll(utm_medium, '\t', ' '), '\t', replaceAll(utm_campaign, '\t', ' '), '\t', replaceAll(utm_term, '\t', ' '), '\t', replaceAll(utm_content, '\t', ' ')))] AS value
WHERE value != '' OR dim = 'referrer'
GROUP BY workspace_id, dim, link_id, hour, country, is_bot, value
SETTINGS max_bytes_before_external_group_by = 400000000;

INSERT INTO {db}.scans_link_dims_daily
SELECT workspace_id, dim, link_id, toStartOfDay(ts, 'UTC') AS day, country, is_bot, value, count() AS scans
FROM {db}.scans
ARRAY JOIN
  ['city', 'visit', 'utm'] AS dim,
  [ if(city = '', '', concat(country, '\t', city)), concat(replaceAll(device, '\t', ' '), '\t', replaceAll(os, '\t', ' '), '\t', replaceAll(browser, '\t', ' '), '\t', replaceAll(referrer_host, '\t', ' ')), if(concat(utm_source, utm_medium, utm_campaign, utm_term, utm_content) = '', '', concat(replaceAll(utm_source, '\t', ' '), '\t', replaceAll(utm_medium, '\t', ' '), '\t', replaceAll(utm_campaign, '\t', ' '), '\t', replaceAll(utm_term, '\t', ' '), '\t', replaceAll(utm_content, '\t', ' ')))] AS value
WHERE value != '' OR dim = 'referrer'
GROUP BY workspace_id, dim, link_id, day, country, is_bot, value
SETTINGS max_bytes_before_external_group_by = 400000000;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.scans_dims_mv TO {db}.scans_dims AS
SELECT workspace_id, toStartOfHour(ts) AS hour, is_bot, dim, value, count() AS scans
FROM {db}.scans
ARRAY JOIN
  ['link', 'country', 'city', 'agent', 'referrer', 'utm'] AS dim,
  [short_id, country, if(city = '', '', concat(country, '\t', city)), concat(replaceAll(device, '\t', ' '), '\t', replaceAll(os, '\t', ' '), '\t', replaceAll(browser, '\t', ' ')), referrer_host, if(concat(utm_source, utm_medium, utm_campaign, utm_term, utm_content) = '', '', concat(replaceAll(utm_source, '\t', ' '), '\t', replaceAll(utm_medium, '\t', ' '), '\t', replaceAll(utm_campaign, '\t', ' '), '\t', replaceAll(utm_term, '\t', ' '), '\t', replaceAll(utm_content, '\t', ' ')))] AS value
WHERE value != '' OR dim = 'referrer'
GROUP BY workspace_id, hour, is_bot, dim, value;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.scans_country_dims_mv TO {db}.scans_country_dims AS
SELECT workspace_id, country, dim, toStartOfHour(ts) AS hour, is_bot, value, count() AS scans
FROM {db}.scans
ARRAY JOIN
  ['link', 'city', 'agent', 'referrer', 'utm'] AS dim,
  [short_id, if(city = '', '', concat(country, '\t', city)), concat(replaceAll(device, '\t', ' '), '\t', replaceAll(os, '\t', ' '), '\t', replaceAll(browser, '\t', ' ')), referrer_host, if(concat(utm_source, utm_medium, utm_campaign, utm_term, utm_content) = '', '', concat(replaceAll(utm_source, '\t', ' '), '\t', replaceAll(utm_medium, '\t', ' '), '\t', replaceAll(utm_campaign, '\t', ' '), '\t', replaceAll(utm_term, '\t', ' '), '\t', replaceAll(utm_content, '\t', ' ')))] AS value
WHERE value != '' OR dim = 'referrer'
GROUP BY workspace_id, country, dim, hour, is_bot, value;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.scans_link_dims_mv TO {db}.scans_link_dims AS
SELECT workspace_id, dim, link_id, toStartOfHour(ts) AS hour, country, is_bot, value, count() AS scans
FROM {db}.scans
ARRAY JOIN
  ['city', 'visit', 'utm'] AS dim,
  [ if(city = '', '', concat(country, '\t', city)), concat(replaceAll(device, '\t', ' '), '\t', replaceAll(os, '\t', ' '), '\t', replaceAll(browser, '\t', ' '), '\t', replaceAll(referrer_host, '\t', ' ')), if(concat(utm_source, utm_medium, utm_campaign, utm_term, utm_content) = '', '', concat(replaceAll(utm_source, '\t', ' '), '\t', replaceAll(utm_medium, '\t', ' '), '\t', replaceAll(utm_campaign, '\t', ' '), '\t', replaceAll(utm_term, '\t', ' '), '\t', replaceAll(utm_content, '\t', ' ')))] AS value
WHERE value != '' OR dim = 'referrer'
GROUP BY workspace_id, dim, link_id, hour, country, is_bot, value;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.scans_link_dims_daily_mv TO {db}.scans_link_dims_daily AS
SELECT workspace_id, dim, link_id, toStartOfDay(ts, 'UTC') AS day, country, is_bot, value, count() AS scans
FROM {db}.scans
ARRAY JOIN
  ['city', 'visit', 'utm'] AS dim,
  [ if(city = '', '', concat(country, '\t', city)), concat(replaceAll(device, '\t', ' '), '\t', replaceAll(os, '\t', ' '), '\t', replaceAll(browser, '\t', ' '), '\t', replaceAll(referrer_host, '\t', ' ')), if(concat(utm_source, utm_medium, utm_campaign, utm_term, utm_content) = '', '', concat(replaceAll(utm_source, '\t', ' '), '\t', replaceAll(utm_medium, '\t', ' '), '\t', replaceAll(utm_campaign, '\t', ' '), '\t', replaceAll(utm_term, '\t', ' '), '\t', replaceAll(utm_content, '\t', ' ')))] AS value
WHERE value != '' OR dim = 'referrer'
GROUP BY workspace_id, dim, link_id, day, country, is_bot, value;
