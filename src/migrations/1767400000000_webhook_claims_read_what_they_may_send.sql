-- Up Migration

-- A drainer's claim (src/webhooks/outbox.ts) reads only the deliveries it may send. It walked every due delivery in due
-- order and passed over, one by one, those it may not send; a backlog of them made every claim slow, and claims run at
-- every change's commit (docs/performance.md, "The outbox under a backlog").

-- Another task queue's deliveries: 1,600 due ones of a queue no drainer here serves made each claim 9 ms instead of
-- 0.3 ms. The index leads with the queue, so a claim reads its own queue's.
CREATE INDEX webhook_deliveries_queue_due_idx ON webhook_deliveries (task_queue, due_at) WHERE due_at IS NOT NULL;
DROP INDEX webhook_deliveries_due_idx;

-- The deliveries already held behind a retrying one take its due time (before the triggers below, which would move
-- them one statement per row).
UPDATE webhook_deliveries f SET due_at = h.due_at
  FROM (SELECT d.id,
               (SELECT max(p.due_at)
                  FROM webhook_deliveries p JOIN webhook_events pe ON pe.id = p.event_id
                 WHERE p.deal_id = d.deal_id AND p.due_at IS NOT NULL AND pe.seq < de.seq) AS due_at
          FROM webhook_deliveries d JOIN webhook_events de ON de.id = d.event_id
         WHERE d.deal_id IS NOT NULL AND d.due_at IS NOT NULL) h
 WHERE h.id = f.id AND h.due_at > f.due_at;

-- A deal's deliveries held behind an earlier one of the deal (its order) were due all the while, so while a marketplace's
-- endpoint was down each claim read every one of them and found it held. Now a delivery is not due before the deal's
-- earlier unsettled ones: written behind one, or behind one that goes to retrying later, it takes that one's due time;
-- when that one settles, the deal's pending deliveries after it are due at once. Only the due times move: the claim
-- still checks the order itself, so a due time moved too far could delay a delivery, never send one out of turn.

-- "Earlier" is the event's order (webhook_events.seq), as in the claim: a replay of an old event goes before the deal's
-- later events, and waits for none of them. A change writes its event and the event's delivery in one statement
-- (src/webhooks/events.ts), and the event is not visible here yet: it is the deal's newest, behind all of its others.
CREATE FUNCTION webhook_deliveries_wait_behind() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ahead timestamptz;
BEGIN
  -- One statement, as this runs for every delivery a change writes; it finds a row only behind a retrying delivery.
  SELECT max(p.due_at) INTO ahead
    FROM webhook_deliveries p JOIN webhook_events pe ON pe.id = p.event_id
   WHERE p.deal_id = NEW.deal_id AND p.due_at > NEW.due_at AND p.id <> NEW.id
     AND pe.seq < coalesce((SELECT e.seq FROM webhook_events e WHERE e.id = NEW.event_id), 9223372036854775807);
  IF ahead IS NOT NULL THEN
    NEW.due_at := ahead;
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER webhook_deliveries_wait_behind BEFORE INSERT ON webhook_deliveries
  FOR EACH ROW WHEN (NEW.deal_id IS NOT NULL AND NEW.due_at IS NOT NULL)
  EXECUTE FUNCTION webhook_deliveries_wait_behind();

-- A delivery's due time moved (an attempt recorded, a skip, a failure): the deal's later ones move with it. The moves
-- it makes are not moves of their own (pg_trigger_depth), so one change is one statement however many wait. Only an
-- attempt recorded as retrying sets a due time ahead, so only a retrying delivery has others waiting on it: the common
-- record (a pending delivery delivered at its first attempt) runs nothing here.
CREATE FUNCTION webhook_deliveries_move_behind() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.due_at IS NULL THEN
    -- Settled: the deliveries held behind it are due now.
    UPDATE webhook_deliveries f SET due_at = now()
      FROM webhook_events fe
     WHERE f.deal_id = NEW.deal_id AND f.due_at > now() AND f.status = 'pending' AND fe.id = f.event_id
       AND fe.seq > (SELECT e.seq FROM webhook_events e WHERE e.id = NEW.event_id);
  ELSIF NEW.due_at > now() THEN
    -- Retried later: the deliveries behind it wait as long.
    UPDATE webhook_deliveries f SET due_at = NEW.due_at
      FROM webhook_events fe
     WHERE f.deal_id = NEW.deal_id AND f.due_at < NEW.due_at AND f.id <> NEW.id AND fe.id = f.event_id
       AND fe.seq > (SELECT e.seq FROM webhook_events e WHERE e.id = NEW.event_id);
  END IF;
  RETURN NULL;
END;
$$;
CREATE TRIGGER webhook_deliveries_move_behind AFTER UPDATE OF due_at ON webhook_deliveries
  FOR EACH ROW WHEN (NEW.deal_id IS NOT NULL AND OLD.due_at IS DISTINCT FROM NEW.due_at AND pg_trigger_depth() < 1
                    AND (OLD.status = 'retrying' OR NEW.due_at > now()))
  EXECUTE FUNCTION webhook_deliveries_move_behind();

-- Down Migration
DROP TRIGGER webhook_deliveries_move_behind ON webhook_deliveries;
DROP FUNCTION webhook_deliveries_move_behind();
DROP TRIGGER webhook_deliveries_wait_behind ON webhook_deliveries;
DROP FUNCTION webhook_deliveries_wait_behind();
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (due_at) WHERE due_at IS NOT NULL;
DROP INDEX webhook_deliveries_queue_due_idx;
