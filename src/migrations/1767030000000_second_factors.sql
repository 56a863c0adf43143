-- Up Migration

-- Second factors for every account (issue 25): an authenticator app's TOTP secret (sealed with the master key, as the
-- administrators' is), passkeys (WebAuthn credentials: only public keys), and recovery codes (hashed, each spent once).
CREATE TABLE user_totp (
  user_id       uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  secret_sealed text NOT NULL,
  -- Null until a first code from the app confirmed the setup; only then does sign-in ask for a code.
  confirmed_at  timestamptz,
  -- The step of the last code accepted: that code and every earlier one are refused afterwards.
  last_step     bigint NOT NULL DEFAULT 0,
  created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE user_passkeys (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id       uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- base64url, as WebAuthn names the credential.
  credential_id text NOT NULL UNIQUE,
  public_key    bytea NOT NULL,
  counter       bigint NOT NULL DEFAULT 0,
  transports    text[] NOT NULL DEFAULT '{}',
  name          text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_used_at  timestamptz
);
CREATE INDEX user_passkeys_user ON user_passkeys (user_id);

CREATE TABLE user_recovery_codes (
  -- HMAC of the normalised code with the master key (src/mfa/recovery-codes.ts).
  code_hash  text PRIMARY KEY,
  user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  used_at    timestamptz
);
CREATE INDEX user_recovery_codes_user ON user_recovery_codes (user_id);

-- WebAuthn challenges: each is spent by the one response that answers it (used_at), so a replayed response fails.
-- user_id is null for a sign-in with a passkey alone, before the user is known.
CREATE TABLE webauthn_challenges (
  challenge  text PRIMARY KEY,
  purpose    text NOT NULL CHECK (purpose IN ('register', 'sign_in')),
  user_id    uuid REFERENCES users (id) ON DELETE CASCADE,
  expires_at timestamptz NOT NULL,
  used_at    timestamptz
);

-- A password accepted for an account with a second factor: the browser holds this token (a cookie) until the second
-- page takes the factor; it is spent by the sign-in it completes.
CREATE TABLE pending_sign_ins (
  token_hash bytea PRIMARY KEY,
  user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  user_agent text NOT NULL DEFAULT '',
  expires_at timestamptz NOT NULL
);

-- How each session signed in (RFC 8176 amr values), for the ID token, and when a second factor was last given in it
-- (at sign-in, or later as a step-up before money moves).
ALTER TABLE cabinet_sessions
  ADD COLUMN amr text[] NOT NULL DEFAULT '{pwd}',
  ADD COLUMN second_factor_at timestamptz;

-- The sign-in's amr travels on the authorization code to the ID token.
ALTER TABLE sso_codes ADD COLUMN amr text[];

-- Whether a buyer's or seller's money move in the cabinet needs a session with a second factor: per marketplace, and
-- for every marketplace at once (the operator's setting, one row).
ALTER TABLE marketplaces ADD COLUMN require_second_factor boolean NOT NULL DEFAULT false;
CREATE TABLE operator_settings (
  id                    boolean PRIMARY KEY DEFAULT true CHECK (id),
  require_second_factor boolean NOT NULL DEFAULT false
);
INSERT INTO operator_settings DEFAULT VALUES;

-- Down Migration
DROP TABLE operator_settings;
ALTER TABLE marketplaces DROP COLUMN require_second_factor;
ALTER TABLE sso_codes DROP COLUMN amr;
ALTER TABLE cabinet_sessions DROP COLUMN amr, DROP COLUMN second_factor_at;
DROP TABLE pending_sign_ins;
DROP TABLE webauthn_challenges;
DROP TABLE user_recovery_codes;
DROP TABLE user_passkeys;
DROP TABLE user_totp;
