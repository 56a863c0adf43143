-- Up Migration

-- What a client registers beside its redirect URIs (issue 25): how it authenticates at the token endpoints
-- (client_secret_basic and client_secret_post both work with the secret; 'none' is a public client, which has no usable
-- secret and must use PKCE), whether its users' `sub` is the svc ID ('public') or a keyed hash per sector
-- ('pairwise'), where RP-initiated logout may send the browser back to (exact URIs), and its back-channel logout URI.
ALTER TABLE sso_clients
  ADD COLUMN token_endpoint_auth_method text NOT NULL DEFAULT 'client_secret_basic'
    CHECK (token_endpoint_auth_method IN ('client_secret_basic', 'client_secret_post', 'none')),
  ADD COLUMN subject_type text NOT NULL DEFAULT 'public' CHECK (subject_type IN ('public', 'pairwise')),
  ADD COLUMN post_logout_redirect_uris text[] NOT NULL DEFAULT '{}',
  ADD COLUMN backchannel_logout_uri text;

-- Pairwise subjects as issued, so that a logout's id_token_hint (which names only the pairwise sub) finds its user.
CREATE TABLE sso_pairwise_subjects (
  client_id text NOT NULL REFERENCES sso_clients (client_id) ON DELETE CASCADE,
  sub       text NOT NULL,
  user_id   uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  PRIMARY KEY (client_id, sub)
);

-- Back-channel logout deliveries: a sign-out writes one row per client to tell, in its own transaction; the drainer
-- (src/sso/backchannel.ts) signs the logout_token and POSTs it, retrying with backoff. id is the token's jti. issuer is
-- the BASE_URL of the process that queued it when it knew it (only drainers with that BASE_URL take the row), NULL when
-- any may (all processes of one deployment share BASE_URL; test servers sharing one database do not).
CREATE TABLE sso_logout_deliveries (
  id              uuid PRIMARY KEY,
  client_id       text NOT NULL REFERENCES sso_clients (client_id) ON DELETE CASCADE,
  user_id         uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  issuer          text,
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  claimed_until   timestamptz,
  last_error      text,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sso_logout_deliveries_due_idx ON sso_logout_deliveries (next_attempt_at);

-- Down Migration
DROP TABLE sso_logout_deliveries;
DROP TABLE sso_pairwise_subjects;
ALTER TABLE sso_clients DROP COLUMN token_endpoint_auth_method, DROP COLUMN subject_type,
  DROP COLUMN post_logout_redirect_uris, DROP COLUMN backchannel_logout_uri;
