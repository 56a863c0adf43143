-- Up Migration

-- One kind of single-use, expiring link for invitations, password resets and sign-up confirmations. A link carries
-- `{prefix}{id}.{HMAC(master key, "purpose:id")}`: only the id is stored, and the purpose is both in the row and in the
-- HMAC, so a reset link never works as an invitation and nothing stored here opens anything.
CREATE TABLE account_tokens (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  purpose    text NOT NULL CHECK (purpose IN ('invitation', 'password_reset', 'signup')),
  user_id    uuid REFERENCES users (id) ON DELETE CASCADE,
  -- A sign-up is confirmed before its account exists: the address waits here, and in `data` the chosen name, the
  -- password's argon2 hash, the page's language and where to go afterwards.
  email      text,
  data       jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at    timestamptz,
  CHECK (purpose = 'signup' OR user_id IS NOT NULL),
  CHECK (purpose <> 'signup' OR email IS NOT NULL)
);
-- One invitation per user, as before: a retried mail carries the same link.
CREATE UNIQUE INDEX account_tokens_invitation_key ON account_tokens (user_id) WHERE purpose = 'invitation';
CREATE INDEX account_tokens_user_idx ON account_tokens (user_id) WHERE used_at IS NULL;

-- Invitations mailed before keep their ids, so their links (whose HMAC purpose was already "invitation") still work
-- for the rest of their 14 days.
INSERT INTO account_tokens (id, purpose, user_id, created_at, expires_at, used_at)
SELECT id, 'invitation', user_id, created_at, created_at + interval '14 days', accepted_at FROM invitations;
DROP TABLE invitations;

-- Sign-up and reset mails per address and per client address, in fixed windows (counted in PostgreSQL so that every
-- server instance counts together).
CREATE TABLE account_mail_windows (
  subject           text PRIMARY KEY,
  hits              integer NOT NULL,
  window_started_at timestamptz NOT NULL
);

-- Sessions as their owner sees them in the list: a public id (the token hash stays inside), the browser, last use.
ALTER TABLE cabinet_sessions
  ADD COLUMN id uuid NOT NULL DEFAULT gen_random_uuid(),
  ADD COLUMN user_agent text NOT NULL DEFAULT '',
  ADD COLUMN last_used_at timestamptz;
UPDATE cabinet_sessions SET last_used_at = created_at;
ALTER TABLE cabinet_sessions ALTER COLUMN last_used_at SET NOT NULL, ALTER COLUMN last_used_at SET DEFAULT now();
CREATE UNIQUE INDEX cabinet_sessions_id_key ON cabinet_sessions (id);

-- Down Migration
DROP INDEX cabinet_sessions_id_key;
ALTER TABLE cabinet_sessions DROP COLUMN id, DROP COLUMN user_agent, DROP COLUMN last_used_at;
DROP TABLE account_mail_windows;
CREATE TABLE invitations (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id     uuid NOT NULL UNIQUE REFERENCES users (id) ON DELETE CASCADE,
  created_at  timestamptz NOT NULL DEFAULT now(),
  accepted_at timestamptz
);
INSERT INTO invitations (id, user_id, created_at, accepted_at)
SELECT id, user_id, created_at, used_at FROM account_tokens WHERE purpose = 'invitation';
DROP TABLE account_tokens;
