-- Up Migration

-- The deal's notices (the mails a change calls for) as a transactional outbox: written in the transaction of the change
-- that caused them (activities/deals/records.ts) and sent afterwards by the worker's drainer (src/deals/notice-outbox.ts),
-- never on the path of the change. A row is claimed for a while (claimed_until) so that one worker sends it; a worker
-- that died while sending leaves it to be claimed again. Mails are keyed by their event, so sending twice writes once.
CREATE TABLE deal_notices (
  id            uuid PRIMARY KEY,
  deal_id       uuid NOT NULL REFERENCES deals (id),
  notice        jsonb NOT NULL,
  attempts      integer NOT NULL DEFAULT 0,
  claimed_until timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX deal_notices_due_idx ON deal_notices (created_at);

-- Wakes the drainers at the commit that wrote notices (NOTIFY is delivered at commit, once per transaction and channel).
CREATE FUNCTION deal_notices_written() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('deal_notices', '');
  RETURN NULL;
END;
$$;
CREATE TRIGGER deal_notices_notify AFTER INSERT ON deal_notices FOR EACH STATEMENT EXECUTE FUNCTION deal_notices_written();

-- Down Migration
DROP TABLE deal_notices;
DROP FUNCTION deal_notices_written();
