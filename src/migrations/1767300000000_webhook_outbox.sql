-- Up Migration

-- Webhook deliveries as a transactional outbox (docs/decisions/0026-webhooks-leave-through-an-outbox.md): a delivery is
-- written with the change that caused its event, and the drainer beside each worker (src/webhooks/outbox.ts) sends it
-- after the commit, woken by NOTIFY. No workflow task or activity task sits between a change and its webhook.
--
-- due_at: when the drainer sends it next; NULL once it is settled (delivered, failed, skipped), so the partial index
--   holds only what is still to send.
-- attempts: the attempts made (the next attempt's number is attempts + 1; a claim counts one).
-- claimed_until: a drainer holds the delivery while it sends; one that died leaves the claim to lapse.
-- deal_id: the event's deal (NULL for an administrator's test event), so "the deal's earlier events go first" is one
--   index lookup.
-- task_queue: the Temporal task queue of the service that wrote it; only the drainers beside that queue's workers send
--   it, as only they ran its delivery activity before (NULL: any drainer, for deliveries from before the outbox).
ALTER TABLE webhook_deliveries
  ADD COLUMN due_at        timestamptz,
  ADD COLUMN attempts      integer NOT NULL DEFAULT 0,
  ADD COLUMN claimed_until timestamptz,
  ADD COLUMN deal_id       uuid,
  ADD COLUMN task_queue    text;
UPDATE webhook_deliveries d SET deal_id = e.deal_id FROM webhook_events e WHERE e.id = d.event_id;
-- Deliveries still under way pass to the outbox: the deal workflows that sent them now wait for it to settle them.
UPDATE webhook_deliveries d
   SET due_at = now(),
       attempts = (SELECT coalesce(max(a.attempt), 0) FROM webhook_attempts a WHERE a.delivery_id = d.id)
 WHERE status IN ('pending', 'retrying');
ALTER TABLE webhook_deliveries ALTER COLUMN due_at SET DEFAULT now();
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (due_at) WHERE due_at IS NOT NULL;
CREATE INDEX webhook_deliveries_deal_due_idx ON webhook_deliveries (deal_id) WHERE due_at IS NOT NULL;

-- Wakes the drainers at the commit that wrote deliveries (NOTIFY is delivered at commit, once per transaction however
-- many rows asked). For each row, not each statement: an insert that made no delivery (a marketplace without a webhook
-- for the event) must not wake them, nor take the lock that a committing NOTIFY holds.
CREATE FUNCTION webhook_deliveries_written() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('webhook_deliveries', '');
  RETURN NULL;
END;
$$;
CREATE TRIGGER webhook_deliveries_notify AFTER INSERT ON webhook_deliveries
  FOR EACH ROW EXECUTE FUNCTION webhook_deliveries_written();

-- Down Migration
DROP TRIGGER webhook_deliveries_notify ON webhook_deliveries;
DROP FUNCTION webhook_deliveries_written();
DROP INDEX webhook_deliveries_deal_due_idx;
DROP INDEX webhook_deliveries_due_idx;
ALTER TABLE webhook_deliveries DROP COLUMN due_at, DROP COLUMN attempts, DROP COLUMN claimed_until, DROP COLUMN deal_id,
  DROP COLUMN task_queue;
