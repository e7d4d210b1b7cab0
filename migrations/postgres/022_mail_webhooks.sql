-- Up Migration
-- Webhook endpoints of a mail organization (Resend's /webhooks) and the delivery
-- log of their events, in the shape of the link product's (006), so the
-- platform's delivery queue and dispatcher serve both. A delivery row is the
-- durable queue entry of one mail event for one endpoint; its event_id is the
-- webhook-id the receiver sees on every attempt and replay.
CREATE TABLE mail_webhook_endpoints (
  id                          uuid PRIMARY KEY,
  organization_id             uuid NOT NULL REFERENCES mail_organizations (id),
  url                         text NOT NULL,
  -- Resend's event names the endpoint receives (email.delivered, contact.created, …).
  events                      text[] NOT NULL,
  status                      text NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
  -- Kept readable because every request is signed with it (HMAC needs the key itself).
  secret                      text NOT NULL,
  previous_secret             text,
  previous_secret_expires_at  timestamptz,
  created_at                  timestamptz NOT NULL DEFAULT now(),
  updated_at                  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mail_webhook_endpoints_organization ON mail_webhook_endpoints (organization_id, created_at DESC, id DESC);

CREATE TABLE mail_webhook_deliveries (
  id               uuid PRIMARY KEY,
  endpoint_id      uuid NOT NULL REFERENCES mail_webhook_endpoints (id) ON DELETE CASCADE,
  organization_id  uuid NOT NULL,
  event_type       text NOT NULL,
  event_id         uuid NOT NULL,
  -- The exact body, so every attempt sends the same bytes.
  body             text NOT NULL,
  state            text NOT NULL CHECK (state IN ('queued', 'attempted', 'acknowledged', 'permanently_rejected', 'retried', 'stopped')),
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz,
  lease_until      timestamptz,
  -- Set on a replay: the delivery it sends again (same event_id and body).
  redelivery_of    uuid,
  created_at       timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
  updated_at       timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now())
);
-- An event consumed twice (at-least-once) queues one delivery per endpoint.
CREATE UNIQUE INDEX mail_webhook_deliveries_once ON mail_webhook_deliveries (endpoint_id, event_id) WHERE redelivery_of IS NULL;
CREATE INDEX mail_webhook_deliveries_due ON mail_webhook_deliveries (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
CREATE INDEX mail_webhook_deliveries_in_flight ON mail_webhook_deliveries (lease_until) WHERE state = 'attempted';
CREATE INDEX mail_webhook_deliveries_log ON mail_webhook_deliveries (endpoint_id, created_at DESC, id DESC);
CREATE INDEX mail_webhook_deliveries_event ON mail_webhook_deliveries (endpoint_id, event_id, created_at);

CREATE TABLE mail_webhook_attempts (
  delivery_id  uuid NOT NULL REFERENCES mail_webhook_deliveries (id) ON DELETE CASCADE,
  attempt      integer NOT NULL,
  started_at   timestamptz NOT NULL,
  finished_at  timestamptz,
  status_code  integer,
  outcome      text,
  error        text,
  PRIMARY KEY (delivery_id, attempt)
);

-- Down Migration
DROP TABLE mail_webhook_attempts;
DROP TABLE mail_webhook_deliveries;
DROP TABLE mail_webhook_endpoints;
