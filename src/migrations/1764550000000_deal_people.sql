-- Up Migration

-- A deal cancelled before money was held: who cancelled it and why. Written by the deal workflow like every record.
ALTER TABLE deals
  ADD COLUMN cancelled_at  timestamptz,
  ADD COLUMN cancel_actor  text,
  ADD COLUMN cancel_reason text NOT NULL DEFAULT '';

-- Listing a marketplace's deals newest first, and a seller's deals in the cabinet.
CREATE INDEX deals_marketplace_created_idx ON deals (marketplace_id, created_at DESC, id DESC);
CREATE INDEX deals_seller_email_idx ON deals (lower(seller_email));

-- A deal has at most one dispute: once decided the deal is closed.
CREATE TABLE deal_disputes (
  deal_id          uuid PRIMARY KEY REFERENCES deals (id),
  status           text NOT NULL CHECK (status IN ('open', 'decided')),
  reason           text NOT NULL,
  opened_by        text NOT NULL,
  opened_at        timestamptz NOT NULL,
  decision_outcome text CHECK (decision_outcome IN ('release', 'refund')),
  decision_reason  text,
  decided_at       timestamptz
);
CREATE INDEX deal_disputes_open_idx ON deal_disputes (opened_at) WHERE status = 'open';

-- The dispute's thread. Evidence files live in the document store; `files` holds their references.
CREATE TABLE deal_dispute_messages (
  id         uuid PRIMARY KEY,
  deal_id    uuid NOT NULL REFERENCES deals (id),
  author     text NOT NULL CHECK (author IN ('buyer', 'seller', 'marketplace', 'arbiter')),
  text       text NOT NULL,
  files      jsonb NOT NULL DEFAULT '[]',
  created_at timestamptz NOT NULL
);
CREATE INDEX deal_dispute_messages_deal_idx ON deal_dispute_messages (deal_id, created_at);

-- Invitations a marketplace asked to send again, counted per deal in fixed windows.
CREATE TABLE deal_invitation_windows (
  deal_id           uuid PRIMARY KEY REFERENCES deals (id),
  hits              integer NOT NULL,
  window_started_at timestamptz NOT NULL
);

-- Down Migration
DROP TABLE deal_invitation_windows, deal_dispute_messages, deal_disputes;
DROP INDEX deals_seller_email_idx, deals_marketplace_created_idx;
ALTER TABLE deals DROP COLUMN cancel_reason, DROP COLUMN cancel_actor, DROP COLUMN cancelled_at;
