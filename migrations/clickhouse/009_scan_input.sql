-- Scans enter through a Null table (issue 53's rollup gap). The sink inserts into scans_input, which
-- keeps nothing; materialized views carry each block from it to scans and to every rollup. Before,
-- the views read FROM scans: on replicas, a server killed after it stored a block in scans and before
-- it fed the views left the rollups without the block, since the retry was deduplicated in scans and
-- ClickHouse 18.16 feeds no view for a deduplicated block. A Null table deduplicates nothing, so a
-- retried block runs every view again, and each Replicated target drops it by itself if it has it
-- (block deduplication; 18.16 turns it off only under a root table that deduplicates): the targets
-- the cut left without the block take it, the others do not count it twice.
-- * block_mark: since each rollup now deduplicates its own blocks, two different scan blocks whose
--   rollup rows are alike (one scan each of the same workspace, hour and values) would be taken for
--   a retry and the second dropped. Each rollup row carries a hash of its group's greatest scan id,
--   so only the same scans' block is alike. Not in the sorting key: merges keep any one of them.
-- * store_scans_mv is named to come after every scans_*_mv: 18.16 feeds a table's views in name
--   order, so scans holds a block only once every rollup took it, and the sink's existence check
--   (rows already in scans) never leaves a rollup without rows it lacks.
-- Nothing is backfilled. Stop the scan sinks of the release before this first (scans wait in Kafka): one
-- still inserting INTO scans after it would store scans that no rollup counts. Rows stored before
-- keep block_mark 0. A file cut short is run again whole: it drops the views it creates, and the
-- migrator passes over an ADD COLUMN whose column exists (migrate.ts).
DROP TABLE IF EXISTS {db}.store_scans_mv;
DROP TABLE IF EXISTS {db}.scans_country_dims_mv;
DROP TABLE IF EXISTS {db}.scans_country_visitors_mv;
DROP TABLE IF EXISTS {db}.scans_dims_mv;
DROP TABLE IF EXISTS {db}.scans_link_dims_daily_mv;
DROP TABLE IF EXISTS {db}.scans_link_dims_mv;
DROP TABLE IF EXISTS {db}.scans_link_triggers_mv;
DROP TABLE IF EXISTS {db}.scans_link_variants_mv;
DROP TABLE IF EXISTS {db}.scans_link_visitors_daily_mv;
DROP TABLE IF EXISTS {db}.scans_link_visitors_mv;
DROP TABLE IF EXISTS {db}.scans_visitors_mv;

CREATE TABLE IF NOT EXISTS {db}.scans_input AS {db}.scans ENGINE = Null;

ALTER TABLE {db}.scans_country_dims ADD COLUMN block_mark UInt64;
ALTER TABLE {db}.scans_country_visitors ADD COLUMN block_mark UInt64;
ALTER TABLE {db}.scans_dims ADD COLUMN block_mark UInt64;
ALTER TABLE {db}.scans_link_dims_daily ADD COLUMN block_mark UInt64;
ALTER TABLE {db}.scans_link_dims ADD COLUMN block_mark UInt64;
ALTER TABLE {db}.scans_link_triggers ADD COLUMN block_mark UInt64;
ALTER TABLE {db}.scans_link_variants ADD COLUMN block_mark UInt64;
ALTER TABLE {db}.scans_link_visitors_daily ADD COLUMN block_mark UInt64;
ALTER TABLE {db}.scans_link_visitors ADD COLUMN block_mark UInt64;
ALTER TABLE {db}.scans_visitors ADD COLUMN block_mark UInt64;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.scans_country_dims_mv TO {db}.scans_country_dims AS
SELECT workspace_id, country, dim, toStartOfHour(ts) AS hour, is_bot, value, count() AS scans, max(cityHash64(scan_id)) AS block_mark
FROM {db}.scans_input
ARRAY JOIN
  ['link', 'city', 'agent', 'referrer', 'utm'] AS dim,
  [short_id, if(city = '', '', concat(country, '\t', city)), concat(replaceAll(device, '\t', ' '), '\t', replaceAll(os, '\t', ' '), '\t', replaceAll(browser, '\t', ' ')), referrer_host, if(concat(utm_source, utm_medium, utm_campaign, utm_term, utm_content) = '', '', concat(replaceAll(utm_source, '\t', ' '), '\t', replaceAll(utm_medium, '\t', ' '), '\t', replaceAll(utm_campaign, '\t', ' '), '\t', replaceAll(utm_term, '\t', ' '), '\t', replaceAll(utm_content, '\t', ' ')))] AS value
WHERE value != '' OR dim = 'referrer'
GROUP BY workspace_id, country, dim, hour, is_bot, value;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.scans_country_visitors_mv TO {db}.scans_country_visitors AS
SELECT workspace_id, country, toStartOfHour(ts) AS hour, is_bot, uniqHLL12State(visitor_id) AS visitors, max(cityHash64(scan_id)) AS block_mark
FROM {db}.scans_input
GROUP BY workspace_id, country, hour, is_bot;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.scans_dims_mv TO {db}.scans_dims AS
SELECT workspace_id, toStartOfHour(ts) AS hour, is_bot, dim, value, count() AS scans, max(cityHash64(scan_id)) AS block_mark
FROM {db}.scans_input
ARRAY JOIN
  ['link', 'country', 'city', 'agent', 'referrer', 'utm'] AS dim,
  [short_id, country, if(city = '', '', concat(country, '\t', city)), concat(replaceAll(device, '\t', ' '), '\t', replaceAll(os, '\t', ' '), '\t', replaceAll(browser, '\t', ' ')), referrer_host, if(concat(utm_source, utm_medium, utm_campaign, utm_term, utm_content) = '', '', concat(replaceAll(utm_source, '\t', ' '), '\t', replaceAll(utm_medium, '\t', ' '), '\t', replaceAll(utm_campaign, '\t', ' '), '\t', replaceAll(utm_term, '\t', ' '), '\t', replaceAll(utm_content, '\t', ' ')))] AS value
WHERE value != '' OR dim = 'referrer'
GROUP BY workspace_id, hour, is_bot, dim, value;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.scans_link_dims_daily_mv TO {db}.scans_link_dims_daily AS
SELECT workspace_id, dim, link_id, toStartOfDay(ts, 'UTC') AS day, country, is_bot, value, count() AS scans, max(cityHash64(scan_id)) AS block_mark
FROM {db}.scans_input
ARRAY JOIN
  ['city', 'visit', 'utm'] AS dim,
  [ if(city = '', '', concat(country, '\t', city)), concat(replaceAll(device, '\t', ' '), '\t', replaceAll(os, '\t', ' '), '\t', replaceAll(browser, '\t', ' '), '\t', replaceAll(referrer_host, '\t', ' ')), if(concat(utm_source, utm_medium, utm_campaign, utm_term, utm_content) = '', '', concat(replaceAll(utm_source, '\t', ' '), '\t', replaceAll(utm_medium, '\t', ' '), '\t', replaceAll(utm_campaign, '\t', ' '), '\t', replaceAll(utm_term, '\t', ' '), '\t', replaceAll(utm_content, '\t', ' ')))] AS value
WHERE value != '' OR dim = 'referrer'
GROUP BY workspace_id, dim, link_id, day, country, is_bot, value;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.scans_link_dims_mv TO {db}.scans_link_dims AS
SELECT workspace_id, dim, link_id, toStartOfHour(ts) AS hour, country, is_bot, value, count() AS scans, max(cityHash64(scan_id)) AS block_mark
FROM {db}.scans_input
ARRAY JOIN
  ['city', 'visit', 'utm'] AS dim,
  [ if(city = '', '', concat(country, '\t', city)), concat(replaceAll(device, '\t', ' '), '\t', replaceAll(os, '\t', ' '), '\t', replaceAll(browser, '\t', ' '), '\t', replaceAll(referrer_host, '\t', ' ')), if(concat(utm_source, utm_medium, utm_campaign, utm_term, utm_content) = '', '', concat(replaceAll(utm_source, '\t', ' '), '\t', replaceAll(utm_medium, '\t', ' '), '\t', replaceAll(utm_campaign, '\t', ' '), '\t', replaceAll(utm_term, '\t', ' '), '\t', replaceAll(utm_content, '\t', ' ')))] AS value
WHERE value != '' OR dim = 'referrer'
GROUP BY workspace_id, dim, link_id, hour, country, is_bot, value;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.scans_link_triggers_mv TO {db}.scans_link_triggers AS
SELECT workspace_id, link_id, toStartOfHour(ts) AS hour, is_bot, country, trigger, count() AS scans, max(cityHash64(scan_id)) AS block_mark
FROM {db}.scans_input
WHERE trigger != 'link'
GROUP BY workspace_id, link_id, hour, is_bot, country, trigger;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.scans_link_variants_mv TO {db}.scans_link_variants AS
SELECT workspace_id, link_id, toStartOfHour(ts) AS hour, is_bot, country, variant, countState() AS scans, uniqHLL12State(visitor_id) AS visitors, max(cityHash64(scan_id)) AS block_mark
FROM {db}.scans_input
WHERE variant != ''
GROUP BY workspace_id, link_id, hour, is_bot, country, variant;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.scans_link_visitors_daily_mv TO {db}.scans_link_visitors_daily AS
SELECT workspace_id, link_id, toStartOfDay(ts, 'UTC') AS day, country, is_bot, uniqHLL12State(visitor_id) AS visitors, max(cityHash64(scan_id)) AS block_mark
FROM {db}.scans_input
GROUP BY workspace_id, link_id, day, country, is_bot;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.scans_link_visitors_mv TO {db}.scans_link_visitors AS
SELECT workspace_id, link_id, toStartOfHour(ts) AS hour, country, is_bot, uniqHLL12State(visitor_id) AS visitors, max(cityHash64(scan_id)) AS block_mark
FROM {db}.scans_input
GROUP BY workspace_id, link_id, hour, country, is_bot;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.scans_visitors_mv TO {db}.scans_visitors AS
SELECT workspace_id, toStartOfHour(ts) AS hour, is_bot, uniqHLL12State(visitor_id) AS visitors, max(cityHash64(scan_id)) AS block_mark
FROM {db}.scans_input
GROUP BY workspace_id, hour, is_bot;

-- Last: the table itself.
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.store_scans_mv TO {db}.scans AS
SELECT * FROM {db}.scans_input;
