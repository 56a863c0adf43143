-- Up Migration

-- Whether the mails of a widget deal may reach each of its parties. Anyone with a marketplace's public key can create
-- a widget deal naming any address, so the mails such a caller can cause (the deal's invitation or new-deal mail, its
-- approval request) reach one address at most a few times an hour per marketplace. Decided once per deal, recipient
-- and kind of mail, before the mail is queued, so retries and replays send exactly what was decided. A deal made by a
-- marketplace's server has no rows here: its mails are never limited this way.
CREATE TABLE widget_deal_mail (
  marketplace_id uuid NOT NULL REFERENCES marketplaces (id),
  external_id    text NOT NULL,
  recipient_hash bytea NOT NULL,
  kind           text NOT NULL CHECK (kind IN ('created', 'approval')),
  allowed        boolean NOT NULL,
  decided_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (marketplace_id, external_id, recipient_hash, kind)
);
CREATE INDEX widget_deal_mail_window_idx ON widget_deal_mail (marketplace_id, recipient_hash, decided_at) WHERE allowed;

-- Down Migration
DROP TABLE widget_deal_mail;
