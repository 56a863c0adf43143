-- Up Migration

-- Refresh tokens (rt_) of the OpenID Connect token endpoint, for a grant with offline_access; stored only as SHA-256
-- hashes. A code exchange starts a family (family_id); each use spends the token (used_at) and issues the next one of
-- the family with a new access token. A spent token presented again revokes the whole family: its refresh tokens and
-- every access token issued from it (sso_access_tokens.family_id). The scope is the family's, as granted; the access
-- tokens may carry less. code_hash names the code that started the family (no reference: codes are forgotten a day
-- after they expire), so that a replayed code revokes the family too.
CREATE TABLE sso_refresh_tokens (
  token_hash bytea PRIMARY KEY,
  family_id  uuid NOT NULL,
  code_hash  bytea,
  client_id  text NOT NULL REFERENCES sso_clients (client_id) ON DELETE CASCADE,
  user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  scope      text NOT NULL DEFAULT '',
  auth_time  timestamptz,
  expires_at timestamptz NOT NULL,
  used_at    timestamptz,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sso_refresh_tokens_family_idx ON sso_refresh_tokens (family_id);
CREATE INDEX sso_refresh_tokens_code_idx ON sso_refresh_tokens (code_hash) WHERE code_hash IS NOT NULL;
CREATE INDEX sso_refresh_tokens_user_client_idx ON sso_refresh_tokens (user_id, client_id) WHERE revoked_at IS NULL;
CREATE INDEX sso_refresh_tokens_expires_idx ON sso_refresh_tokens (expires_at);

-- An access token comes from a code (code_hash) or from a refresh token (family_id, no code); one from a code that
-- started a family has both.
ALTER TABLE sso_access_tokens ALTER COLUMN code_hash DROP NOT NULL, ADD COLUMN family_id uuid;
CREATE INDEX sso_access_tokens_family_idx ON sso_access_tokens (family_id) WHERE family_id IS NOT NULL;

-- Down Migration
DROP INDEX sso_access_tokens_family_idx;
DELETE FROM sso_access_tokens WHERE code_hash IS NULL;
ALTER TABLE sso_access_tokens DROP COLUMN family_id, ALTER COLUMN code_hash SET NOT NULL;
DROP TABLE sso_refresh_tokens;
