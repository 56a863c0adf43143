-- Up Migration

-- An administrator can disable an SSO client without deleting it (its users' grants and connected sites stay): while
-- disabled_at is set the client is unknown at authorize, invalid_client at both token endpoints, and the access tokens
-- it was issued are refused at userinfo. Enabling it again clears the column.
ALTER TABLE sso_clients ADD COLUMN disabled_at timestamptz;

-- Down Migration
ALTER TABLE sso_clients DROP COLUMN disabled_at;
