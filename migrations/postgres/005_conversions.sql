-- Up Migration
-- Conversions and tracked clicks as accepted by POST /api/v1/track. This table
-- is both the idempotency record (one row per workspace, type, event and
-- externalId) and the outbox: a row is published to the `conversions` topic
-- after the request commits, and the relay publishes what a crash or a Kafka
-- outage left unpublished.
CREATE TABLE conversions (
  id            uuid PRIMARY KEY,
  workspace_id  uuid NOT NULL REFERENCES workspaces (id),
  type          text NOT NULL CHECK (type IN ('conversion', 'click')),
  event         text NOT NULL,
  external_id   text,
  record        jsonb NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
  published_at  timestamptz
);
CREATE UNIQUE INDEX conversions_idempotency ON conversions (workspace_id, type, event, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX conversions_unpublished ON conversions (created_at) WHERE published_at IS NULL;

-- Down Migration
DROP TABLE conversions;
