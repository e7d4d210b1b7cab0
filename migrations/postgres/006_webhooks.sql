-- Up Migration
-- Webhook endpoints of a workspace and the delivery log of their events. A
-- delivery row is the durable queue entry of one event for one endpoint: it is
-- written before the first attempt, and its next_attempt_at is the schedule a
-- restarted dispatcher resumes from.
CREATE TABLE webhook_endpoints (
  id                          uuid PRIMARY KEY,
  workspace_id                uuid NOT NULL REFERENCES workspaces (id),
  url                         text NOT NULL,
  description                 text,
  -- Kept readable because every request is signed with it (HMAC needs the key itself).
  secret                      text NOT NULL,
  previous_secret             text,
  previous_secret_expires_at  timestamptz,
  created_at                  timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
  updated_at                  timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now())
);
CREATE INDEX webhook_endpoints_workspace ON webhook_endpoints (workspace_id, created_at);

CREATE TABLE webhook_deliveries (
  id               uuid PRIMARY KEY,
  endpoint_id      uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  workspace_id     uuid NOT NULL,
  event_type       text NOT NULL,
  scan_id          uuid NOT NULL,
  -- The exact body, so every attempt sends the same bytes.
  body             text NOT NULL,
  state            text NOT NULL CHECK (state IN ('queued', 'attempted', 'acknowledged', 'permanently_rejected', 'retried', 'stopped')),
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz,
  -- While an attempt is in flight: after this, a dispatcher that died mid-attempt is presumed gone.
  lease_until      timestamptz,
  -- The delivery this one redelivers (it may since have been purged by the log retention).
  redelivery_of    uuid,
  created_at       timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
  updated_at       timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now())
);
-- A scan consumed twice (at-least-once) queues one delivery per endpoint.
CREATE UNIQUE INDEX webhook_deliveries_once ON webhook_deliveries (endpoint_id, scan_id) WHERE redelivery_of IS NULL;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
CREATE INDEX webhook_deliveries_in_flight ON webhook_deliveries (lease_until) WHERE state = 'attempted';
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);

CREATE TABLE webhook_attempts (
  delivery_id  uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempt      integer NOT NULL,
  started_at   timestamptz NOT NULL,
  finished_at  timestamptz,
  status_code  integer,
  -- acknowledged | rejected | failed (5xx, 3xx, timeout, connection) | interrupted (the dispatcher died mid-attempt)
  outcome      text,
  error        text,
  PRIMARY KEY (delivery_id, attempt)
);

-- Down Migration
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_endpoints;
