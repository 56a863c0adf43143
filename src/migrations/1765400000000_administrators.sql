-- Up Migration

-- Administrators are people: an account (users: e-mail and password, the accounts module's) with a role and a TOTP
-- second factor. The role is read on every request, so a change or a disabling holds at once on every instance.
CREATE TABLE administrators (
  user_id            uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  role               text NOT NULL CHECK (role IN ('admin', 'arbiter', 'support')),
  -- Sealed with the master key: the server must read it to check codes. Set when the setup page is first opened,
  -- confirmed by the first code typed there.
  totp_secret_sealed text,
  totp_confirmed_at  timestamptz,
  -- The step of the last code accepted: a code works once.
  totp_last_step     bigint NOT NULL DEFAULT 0,
  disabled_at        timestamptz,
  created_at         timestamptz NOT NULL DEFAULT now(),
  created_by         text NOT NULL
);

-- An administrator's sign-in is an adm_ token like the named ones, tied to them and expiring.
ALTER TABLE admin_tokens
  ADD COLUMN administrator_id uuid REFERENCES administrators (user_id) ON DELETE CASCADE,
  ADD COLUMN expires_at timestamptz;
CREATE INDEX admin_tokens_administrator_idx ON admin_tokens (administrator_id) WHERE administrator_id IS NOT NULL;

-- The setup link of a new administrator is a link of the accounts module's one mechanism.
ALTER TABLE account_tokens DROP CONSTRAINT account_tokens_purpose_check;
ALTER TABLE account_tokens ADD CONSTRAINT account_tokens_purpose_check
  CHECK (purpose IN ('invitation', 'password_reset', 'signup', 'admin_setup'));

-- Down Migration
ALTER TABLE account_tokens DROP CONSTRAINT account_tokens_purpose_check;
ALTER TABLE account_tokens ADD CONSTRAINT account_tokens_purpose_check CHECK (purpose IN ('invitation', 'password_reset', 'signup'));
ALTER TABLE admin_tokens DROP COLUMN administrator_id, DROP COLUMN expires_at;
DROP TABLE administrators;
