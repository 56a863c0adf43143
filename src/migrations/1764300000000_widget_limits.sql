-- Up Migration

-- Widget deal creations counted per public key and per client address, in fixed windows, as sso_login_attempts
-- counts passwords: in PostgreSQL, so that every main server instance counts against the same limit.
CREATE TABLE widget_create_windows (
  subject           text PRIMARY KEY,
  hits              integer NOT NULL,
  window_started_at timestamptz NOT NULL
);

-- Down Migration
DROP TABLE widget_create_windows;
