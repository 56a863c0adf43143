-- Up Migration

-- The destination each payout was sent to, fixed at its first attempt: every retry of a payout (same id, same
-- Idempotence-Key at the acquirer) must send the same body, even when the seller gives another card meanwhile (the
-- acquirer refuses a key reused with another body). The token stays encrypted, as in payout_destinations.
CREATE TABLE payout_destination_uses (
  payout_id       uuid PRIMARY KEY,
  deal_id         uuid NOT NULL REFERENCES deals (id),
  type            text NOT NULL,
  token_encrypted text NOT NULL,
  title           text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE payout_destination_uses;
