-- Up Migration

-- A user's grants to SSO clients: the consent given in the browser (or implied: a marketplace's own client, a code
-- issued for a cabinet token). A grant lives while revoked_at is null; revoking it asks consent again on the next
-- sign-in, and a later consent starts it afresh (first_at). The cabinet lists live ones as connected sites.
CREATE TABLE sso_grants (
  user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  client_id  text NOT NULL REFERENCES sso_clients (client_id) ON DELETE CASCADE,
  first_at   timestamptz NOT NULL DEFAULT now(),
  last_at    timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz,
  PRIMARY KEY (user_id, client_id)
);

-- Revoking a grant revokes the user's live access tokens for that client and expires their unused codes.
CREATE INDEX sso_access_tokens_user_client_idx ON sso_access_tokens (user_id, client_id) WHERE revoked_at IS NULL;
CREATE INDEX sso_codes_user_client_idx ON sso_codes (user_id, client_id) WHERE consumed_at IS NULL;

-- Down Migration
DROP INDEX sso_codes_user_client_idx;
DROP INDEX sso_access_tokens_user_client_idx;
DROP TABLE sso_grants;
