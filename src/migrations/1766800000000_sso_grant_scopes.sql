-- Up Migration

-- What the user allowed each client (issue 25: scopes select the claims, and consent lists exactly those): the scopes
-- a consent covered (profile, email, org, offline_access; openid is implied). A sign-in asking for a scope the grant
-- lacks asks consent again. Grants from before were allowed on a page that listed the name, e-mail address and
-- organization, never offline access.
ALTER TABLE sso_grants ADD COLUMN scopes text[] NOT NULL DEFAULT '{}';
UPDATE sso_grants SET scopes = '{profile,email,org}';

-- Down Migration
ALTER TABLE sso_grants DROP COLUMN scopes;
