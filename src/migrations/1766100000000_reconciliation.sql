-- Up Migration

-- The daily reconciliation with the acquirer (src/money/reconciliation.ts): each run compares what our ledger and
-- records say of every open or recently closed live deal with what the acquirer answers, and keeps the differences.
-- A run is one row, written when it starts and completed when it ends (its counts are what the run found, so a retried
-- batch counts nothing twice).
CREATE TABLE reconciliation_runs (
  id            uuid PRIMARY KEY,
  -- `schedule`: the daily Temporal Schedule; `manual`: an administrator's "run now".
  trigger       text NOT NULL CHECK (trigger IN ('schedule', 'manual')),
  started_by    text,
  workflow_id   text NOT NULL,
  status        text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'finished', 'failed')),
  started_at    timestamptz NOT NULL DEFAULT now(),
  finished_at   timestamptz,
  deals_checked integer NOT NULL DEFAULT 0 CHECK (deals_checked >= 0),
  checks        integer NOT NULL DEFAULT 0 CHECK (checks >= 0),
  mismatches    integer NOT NULL DEFAULT 0 CHECK (mismatches >= 0),
  errors        integer NOT NULL DEFAULT 0 CHECK (errors >= 0),
  error         text
);
CREATE INDEX reconciliation_runs_started_idx ON reconciliation_runs (started_at DESC, id DESC);

-- What a run found: a difference between ours and the acquirer's (`mismatch`), or a check the acquirer could not
-- answer (`error`, its reason in `detail`). Matches are only counted in the run. `ref` names what was compared (the
-- acquirer's deal, our payout or payment), so a batch that is retried writes each finding once.
CREATE TABLE reconciliation_items (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id         uuid NOT NULL REFERENCES reconciliation_runs (id),
  checked_at     timestamptz NOT NULL DEFAULT now(),
  deal_id        uuid NOT NULL REFERENCES deals (id),
  marketplace_id uuid NOT NULL REFERENCES marketplaces (id),
  kind           text NOT NULL CHECK (kind IN ('deal_balance', 'payout_status', 'payment_status')),
  ref            text NOT NULL,
  currency       char(3),
  ours           text NOT NULL,
  theirs         text,
  status         text NOT NULL CHECK (status IN ('mismatch', 'error')),
  detail         text NOT NULL DEFAULT '',
  UNIQUE (run_id, deal_id, kind, ref)
);
CREATE INDEX reconciliation_items_status_idx ON reconciliation_items (status, id DESC);
CREATE INDEX reconciliation_items_deal_idx ON reconciliation_items (deal_id, id DESC);

-- Down Migration
DROP TABLE reconciliation_items;
DROP TABLE reconciliation_runs;
