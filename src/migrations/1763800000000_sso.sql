-- Up Migration

-- SSO clients. The cs_ secret is kept twice: its SHA-256 to check it in constant time, and sealed with the master key
-- because the administrative card shows it again. A marketplace activated with sso_redirect_uri owns one client.
CREATE TABLE sso_clients (
  client_id         text PRIMARY KEY,
  name              text NOT NULL,
  redirect_uris     text[] NOT NULL CHECK (cardinality(redirect_uris) > 0),
  secret_hash       bytea NOT NULL,
  secret_sealed     text NOT NULL,
  marketplace_id    uuid UNIQUE REFERENCES marketplaces (id) ON DELETE CASCADE,
  created_at        timestamptz NOT NULL DEFAULT now(),
  secret_rotated_at timestamptz
);

-- Authorization codes (ac_), stored only as SHA-256 hashes. A code is consumed by one conditional UPDATE; consumed
-- rows stay until a day after expiry so that a replay is recognised (and revokes what the code issued).
CREATE TABLE sso_codes (
  code_hash      bytea PRIMARY KEY,
  client_id      text NOT NULL REFERENCES sso_clients (client_id) ON DELETE CASCADE,
  user_id        uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  redirect_uri   text NOT NULL,
  scope          text NOT NULL DEFAULT '',
  nonce          text,
  code_challenge text, -- PKCE: base64url(SHA-256(verifier)); S256 is the only method
  auth_time      timestamptz,
  expires_at     timestamptz NOT NULL,
  consumed_at    timestamptz,
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sso_codes_expires_idx ON sso_codes (expires_at);

-- Access tokens of the OpenID Connect token endpoint (for userinfo), stored only as hashes; revoked when their code
-- is replayed.
CREATE TABLE sso_access_tokens (
  token_hash bytea PRIMARY KEY,
  code_hash  bytea NOT NULL REFERENCES sso_codes (code_hash) ON DELETE CASCADE,
  client_id  text NOT NULL REFERENCES sso_clients (client_id) ON DELETE CASCADE,
  user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  scope      text NOT NULL DEFAULT '',
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sso_access_tokens_code_idx ON sso_access_tokens (code_hash);

-- ID token signing keys (RS256), the private half sealed with the master key. The newest key whose not_before has
-- passed signs; a key is published in the JWKS from its creation until a day after a newer key replaced it.
CREATE TABLE sso_signing_keys (
  kid            text PRIMARY KEY,
  alg            text NOT NULL,
  public_jwk     jsonb NOT NULL,
  private_sealed text NOT NULL,
  not_before     timestamptz NOT NULL DEFAULT now(),
  created_at     timestamptz NOT NULL DEFAULT now()
);

-- Sign-in attempts on the SSO login form per account and per address, in fixed windows.
CREATE TABLE sso_login_attempts (
  subject           text PRIMARY KEY,
  attempts          integer NOT NULL,
  window_started_at timestamptz NOT NULL
);

-- Down Migration
DROP TABLE sso_login_attempts, sso_signing_keys, sso_access_tokens, sso_codes, sso_clients;
