-- Up Migration

-- The marketplace's fee (src/money/fee.ts): a schedule applied to each new deal's amount, and when the fee moves to the
-- marketplace. Each part may be null (or 0): no percentage, no fixed part, no minimum, no maximum.
ALTER TABLE marketplaces
  ADD COLUMN fee_percent numeric(5, 2) CHECK (fee_percent BETWEEN 0 AND 100),
  ADD COLUMN fee_fixed   numeric(20, 2) CHECK (fee_fixed >= 0),
  ADD COLUMN fee_min     numeric(20, 2) CHECK (fee_min >= 0),
  ADD COLUMN fee_max     numeric(20, 2) CHECK (fee_max >= 0),
  ADD COLUMN fee_moment  text NOT NULL DEFAULT 'close' CHECK (fee_moment IN ('payment', 'close'));

-- A deal keeps the fee fixed at its creation (the schedule then, or the marketplace's own `fee`) and the moment it
-- moves: a later change of the schedule leaves open deals as they are. Deals from before fees take none.
ALTER TABLE deals
  ADD COLUMN fee        numeric(20, 2) NOT NULL DEFAULT 0 CHECK (fee >= 0),
  ADD COLUMN fee_moment text NOT NULL DEFAULT 'close' CHECK (fee_moment IN ('payment', 'close')),
  ADD CONSTRAINT deals_fee_within_amount CHECK (fee <= amount);

-- The ledger (src/money/ledger.ts): each money movement of a deal is a posting of balanced entries, written in the
-- same transaction as the deal change that caused it and keyed by that change (`cause`), so a retried write posts
-- nothing twice. Append-only like the audit log: the triggers refuse UPDATE, DELETE and TRUNCATE for every role, and
-- the application role may only INSERT and SELECT (src/db-roles.ts INSERT_ONLY_TABLES).
CREATE TABLE ledger_postings (
  id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  -- The order postings were written in: pages and cursors follow it.
  seq            bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  at             timestamptz NOT NULL DEFAULT now(),
  marketplace_id uuid NOT NULL REFERENCES marketplaces (id),
  deal_id        uuid NOT NULL REFERENCES deals (id),
  kind           text NOT NULL CHECK (kind IN ('payment', 'fee', 'payout', 'refund', 'acquirer_fee', 'reversal')),
  cause          text NOT NULL CHECK (length(cause) BETWEEN 1 AND 200),
  UNIQUE (deal_id, cause)
);
CREATE INDEX ledger_postings_marketplace_idx ON ledger_postings (marketplace_id, seq DESC);
CREATE INDEX ledger_postings_marketplace_at_idx ON ledger_postings (marketplace_id, at);

CREATE TABLE ledger_entries (
  posting_id uuid NOT NULL REFERENCES ledger_postings (id),
  line       smallint NOT NULL CHECK (line >= 1),
  account    text NOT NULL CHECK (length(account) BETWEEN 1 AND 200),
  amount     numeric(20, 2) NOT NULL CHECK (amount <> 0),
  currency   char(3) NOT NULL,
  PRIMARY KEY (posting_id, line)
);

CREATE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only', TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
END;
$$;
CREATE TRIGGER ledger_postings_no_update BEFORE UPDATE OR DELETE ON ledger_postings FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
CREATE TRIGGER ledger_postings_no_truncate BEFORE TRUNCATE ON ledger_postings FOR EACH STATEMENT EXECUTE FUNCTION ledger_append_only();
CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE OR DELETE ON ledger_entries FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON ledger_entries FOR EACH STATEMENT EXECUTE FUNCTION ledger_append_only();

-- Every posting balances: at the commit of the transaction that wrote it (constraint triggers deferred to the end, when
-- all its entries are there), it has two entries at least and they sum to 0 in each currency; otherwise the whole
-- transaction, the deal change with it, is refused (check_violation).
CREATE FUNCTION ledger_posting_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  posting uuid;
  entries int;
  off text;
BEGIN
  IF TG_TABLE_NAME = 'ledger_entries' THEN
    posting := NEW.posting_id;
  ELSE
    posting := NEW.id;
  END IF;
  SELECT count(*) INTO entries FROM ledger_entries WHERE posting_id = posting;
  IF entries < 2 THEN
    RAISE EXCEPTION 'ledger posting % has % entries; a posting has two at least', posting, entries USING ERRCODE = 'check_violation';
  END IF;
  SELECT string_agg(currency || ' ' || total, ', ') INTO off
    FROM (SELECT currency, sum(amount) AS total FROM ledger_entries WHERE posting_id = posting GROUP BY currency) AS sums
   WHERE total <> 0;
  IF off IS NOT NULL THEN
    RAISE EXCEPTION 'ledger posting % does not balance: its entries sum to %', posting, off USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END;
$$;
CREATE CONSTRAINT TRIGGER ledger_postings_balanced AFTER INSERT ON ledger_postings DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION ledger_posting_balanced();
CREATE CONSTRAINT TRIGGER ledger_entries_balanced AFTER INSERT ON ledger_entries DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION ledger_posting_balanced();

-- Down Migration
DROP TABLE ledger_entries;
DROP TABLE ledger_postings;
DROP FUNCTION ledger_posting_balanced();
DROP FUNCTION ledger_append_only();
ALTER TABLE deals DROP CONSTRAINT deals_fee_within_amount, DROP COLUMN fee_moment, DROP COLUMN fee;
ALTER TABLE marketplaces DROP COLUMN fee_moment, DROP COLUMN fee_max, DROP COLUMN fee_min, DROP COLUMN fee_fixed, DROP COLUMN fee_percent;
