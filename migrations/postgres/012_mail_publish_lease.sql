-- Up Migration
-- Who publishes a message holds a short lease on it instead of a row lock held across the Kafka send:
-- a request, a replay and the relay then never publish one message at once, and a publisher that died
-- lets its lease run out for the relay.
ALTER TABLE mail_messages ADD COLUMN publish_lease_until timestamptz;

-- Down Migration
ALTER TABLE mail_messages DROP COLUMN publish_lease_until;
