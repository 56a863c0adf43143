-- Up Migration

-- The event types a marketplace's endpoint is sent; NULL is every type, those added later included.
-- A rotated-out secret keeps signing beside the new one until previous_secret_expires_at, so receivers can switch
-- without dropping a delivery; encrypted with the master key like the current one.
ALTER TABLE webhook_endpoints
  ADD COLUMN events                     text[] CHECK (cardinality(events) > 0),
  ADD COLUMN previous_secret_encrypted  text,
  ADD COLUMN previous_secret_expires_at timestamptz,
  ADD CONSTRAINT webhook_endpoints_previous_check
    CHECK ((previous_secret_encrypted IS NULL) = (previous_secret_expires_at IS NULL));

-- GET /api/mkt/events lists a marketplace's events newest first. Events of one deal can share an occurred_at (a
-- millisecond); seq, the order they were written in, which is the order they happened in, breaks the tie.
-- Events are never purged: reconciliation promises at least 30 days.
ALTER TABLE webhook_events ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
CREATE INDEX webhook_events_marketplace_idx ON webhook_events (marketplace_id, occurred_at DESC, seq DESC);

-- Down Migration
DROP INDEX webhook_events_marketplace_idx;
ALTER TABLE webhook_events DROP COLUMN seq;
ALTER TABLE webhook_endpoints
  DROP CONSTRAINT webhook_endpoints_previous_check,
  DROP COLUMN previous_secret_expires_at,
  DROP COLUMN previous_secret_encrypted,
  DROP COLUMN events;
