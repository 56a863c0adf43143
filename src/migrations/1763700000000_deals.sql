-- Up Migration

-- A marketplace's deal, unique by its own external_id. Its status is computed from documents, approvals and
-- payments (src/deals/status.ts); the column keeps the last computed value for listing and filtering.
CREATE TABLE deals (
  id             uuid PRIMARY KEY,
  marketplace_id uuid NOT NULL REFERENCES marketplaces (id),
  external_id    text NOT NULL CHECK (length(external_id) BETWEEN 1 AND 128),
  title          text NOT NULL DEFAULT '',
  buyer_email    text NOT NULL,
  buyer_name     text NOT NULL DEFAULT '',
  seller_email   text NOT NULL DEFAULT '',
  amount         numeric(20, 2) NOT NULL DEFAULT 0 CHECK (amount >= 0),
  currency       char(3) NOT NULL DEFAULT 'RUB',
  description    text NOT NULL DEFAULT '',
  status         text NOT NULL DEFAULT 'created',
  buyer_id       uuid REFERENCES users (id),
  seller_id      uuid REFERENCES users (id),
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  UNIQUE (marketplace_id, external_id)
);
CREATE INDEX deals_buyer_email_idx ON deals (lower(buyer_email));

-- Documents live in the buyer's cloud (the buyer's personal organization); the row is the reference.
CREATE TABLE deal_documents (
  id              uuid PRIMARY KEY,
  deal_id         uuid NOT NULL REFERENCES deals (id),
  organization_id uuid NOT NULL REFERENCES organizations (id),
  kind            text NOT NULL CHECK (kind IN ('offer', 'contract', 'invoice', 'act', 'waybill')),
  name            text NOT NULL,
  content_type    text NOT NULL,
  size            bigint NOT NULL CHECK (size >= 0),
  sha256          text NOT NULL,
  storage_key     text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX deal_documents_deal_idx ON deal_documents (deal_id, created_at);

CREATE TABLE deal_approvals (
  id         uuid PRIMARY KEY,
  deal_id    uuid NOT NULL REFERENCES deals (id),
  status     text NOT NULL CHECK (status IN ('pending', 'approved', 'rejected')),
  approver   text NOT NULL,
  comment    text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now(),
  decided_at timestamptz
);
CREATE INDEX deal_approvals_deal_idx ON deal_approvals (deal_id, created_at);
CREATE INDEX deal_approvals_approver_idx ON deal_approvals (lower(approver), status);

CREATE TABLE deal_payments (
  id                  uuid PRIMARY KEY,
  deal_id             uuid NOT NULL REFERENCES deals (id),
  amount              numeric(20, 2) NOT NULL CHECK (amount >= 0),
  currency            char(3) NOT NULL,
  provider            text NOT NULL,
  status              text NOT NULL CHECK (status IN ('pending', 'hold', 'released', 'refunded', 'disputed')),
  payment_url         text,
  provider_payment_id text,
  hold_expires_at     timestamptz,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX deal_payments_deal_idx ON deal_payments (deal_id, created_at);
CREATE UNIQUE INDEX deal_payments_provider_idx ON deal_payments (provider, provider_payment_id);

-- One webhook endpoint per marketplace. The secret stays viewable, so it is encrypted with the master key.
CREATE TABLE webhook_endpoints (
  marketplace_id   uuid PRIMARY KEY REFERENCES marketplaces (id),
  url              text NOT NULL,
  secret_encrypted text NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);

-- An event's body bytes are fixed when it happens, so every retry and replay sends the same bytes and signature.
CREATE TABLE webhook_events (
  id             uuid PRIMARY KEY,
  marketplace_id uuid NOT NULL REFERENCES marketplaces (id),
  deal_id        uuid NOT NULL REFERENCES deals (id),
  event          text NOT NULL,
  body           bytea NOT NULL,
  occurred_at    timestamptz NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_events_deal_idx ON webhook_events (deal_id, occurred_at);

-- A delivery is one run of sending an event (the first, or an administrator's replay): X-Svc-Delivery.
CREATE TABLE webhook_deliveries (
  id         uuid PRIMARY KEY,
  event_id   uuid NOT NULL REFERENCES webhook_events (id),
  status     text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'retrying', 'failed', 'skipped')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id);

-- Every attempt of every delivery: the administrator's webhook log.
CREATE TABLE webhook_attempts (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  delivery_id  uuid NOT NULL REFERENCES webhook_deliveries (id),
  attempt      integer NOT NULL,
  attempted_at timestamptz NOT NULL DEFAULT now(),
  status       text NOT NULL CHECK (status IN ('delivered', 'retrying', 'failed')),
  http_status  integer,
  error        text,
  duration_ms  integer NOT NULL,
  UNIQUE (delivery_id, attempt)
);
CREATE INDEX webhook_attempts_time_idx ON webhook_attempts (attempted_at DESC);

-- Cabinet sessions: the cabinet token (ct_…) stored as a hash.
CREATE TABLE cabinet_sessions (
  token_hash bytea PRIMARY KEY,
  user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX cabinet_sessions_user_idx ON cabinet_sessions (user_id);

-- One invitation per user made by a deal. Its link token is derived from the id with the master key, so nothing
-- secret is stored and a retried mail carries the same link.
CREATE TABLE invitations (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id     uuid NOT NULL UNIQUE REFERENCES users (id) ON DELETE CASCADE,
  created_at  timestamptz NOT NULL DEFAULT now(),
  accepted_at timestamptz
);

-- Down Migration
DROP TABLE invitations, cabinet_sessions, webhook_attempts, webhook_deliveries, webhook_events, webhook_endpoints,
  deal_payments, deal_approvals, deal_documents, deals;
