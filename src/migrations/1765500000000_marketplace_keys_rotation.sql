-- Up Migration

-- A rotated secret key keeps working until expires_at (the overlap the administrator chose), a revoked key stops at
-- revoked_at. The prefix is the key's first characters, so the console can tell keys apart without storing them;
-- keys made before this migration have none.
ALTER TABLE marketplace_keys
  ADD COLUMN expires_at timestamptz,
  ADD COLUMN prefix     text;

-- An administrator's test event (webhook.test) belongs to no deal.
ALTER TABLE webhook_events ALTER COLUMN deal_id DROP NOT NULL;

-- The webhook log shows the first bytes of the receiver's answer (never more than 1 KiB is kept).
ALTER TABLE webhook_attempts ADD COLUMN response_excerpt text;

-- The console's marketplace list, newest first, paged by id.
CREATE INDEX marketplaces_created_idx ON marketplaces (created_at DESC, id DESC);

-- Down Migration
DROP INDEX marketplaces_created_idx;
ALTER TABLE webhook_attempts DROP COLUMN response_excerpt;
DELETE FROM webhook_attempts WHERE delivery_id IN
  (SELECT d.id FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE e.deal_id IS NULL);
DELETE FROM webhook_deliveries WHERE event_id IN (SELECT id FROM webhook_events WHERE deal_id IS NULL);
DELETE FROM webhook_events WHERE deal_id IS NULL;
ALTER TABLE webhook_events ALTER COLUMN deal_id SET NOT NULL;
ALTER TABLE marketplace_keys DROP COLUMN prefix, DROP COLUMN expires_at;
