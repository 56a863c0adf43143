-- Up Migration

-- Accounts. The svc ID is the user's UUID. E-mail is unique regardless of case.
CREATE TABLE users (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email         text NOT NULL CHECK (length(email) BETWEEN 3 AND 320),
  name          text NOT NULL DEFAULT '',
  password_hash text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE organizations (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name       text NOT NULL,
  personal   boolean NOT NULL DEFAULT false,
  -- A personal organization belongs to exactly one user, and a user has at most one.
  owner_id   uuid REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK (NOT personal OR owner_id IS NOT NULL)
);
CREATE UNIQUE INDEX organizations_personal_owner_key ON organizations (owner_id) WHERE personal;

CREATE TABLE memberships (
  user_id         uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  role            text NOT NULL DEFAULT 'member' CHECK (role IN ('owner', 'member')),
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, organization_id)
);
CREATE INDEX memberships_organization_idx ON memberships (organization_id);

-- Administrator tokens, stored only as SHA-256 hashes.
CREATE TABLE admin_tokens (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name       text NOT NULL,
  token_hash bytea NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);

CREATE TABLE marketplaces (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name             text NOT NULL,
  mode             text NOT NULL CHECK (mode IN ('sandbox', 'live')),
  active           boolean NOT NULL DEFAULT true,
  sso_redirect_uri text,
  allowed_origins  text[] NOT NULL DEFAULT '{}',
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);

-- mk_ (secret) and pk_ (public) keys, stored only as SHA-256 hashes; a table of their own so keys can rotate.
CREATE TABLE marketplace_keys (
  key_hash       bytea PRIMARY KEY,
  marketplace_id uuid NOT NULL REFERENCES marketplaces (id) ON DELETE CASCADE,
  kind           text NOT NULL CHECK (kind IN ('secret', 'public')),
  created_at     timestamptz NOT NULL DEFAULT now(),
  revoked_at     timestamptz
);
CREATE INDEX marketplace_keys_marketplace_idx ON marketplace_keys (marketplace_id);

-- Outgoing mail. Without SMTP_URL it stays here as the development outbox (GET /admin/mail).
CREATE TABLE mail_outbox (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  idempotency_key text NOT NULL UNIQUE,
  recipient       text NOT NULL,
  subject         text NOT NULL,
  text_body       text NOT NULL,
  status          text NOT NULL CHECK (status IN ('outbox', 'pending', 'sent', 'failed')),
  attempts        integer NOT NULL DEFAULT 0,
  last_error      text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  sent_at         timestamptz
);
CREATE INDEX mail_outbox_created_idx ON mail_outbox (created_at DESC);

-- Data API accounts: a tariff per user; keys (svc_mcp_) stored only as SHA-256 hashes.
CREATE TABLE data_accounts (
  id            uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  tariff        text NOT NULL CHECK (tariff IN ('free', 'pro', 'business', 'enterprise')),
  monthly_quota bigint CHECK (monthly_quota >= 0),
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE data_keys (
  key_hash   bytea PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES data_accounts (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE INDEX data_keys_account_idx ON data_keys (account_id);

-- Down Migration
DROP TABLE data_keys, data_accounts, mail_outbox, marketplace_keys, marketplaces, admin_tokens, memberships,
  organizations, users;
