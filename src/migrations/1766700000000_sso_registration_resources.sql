-- Up Migration

-- Dynamic client registration (RFC 7591) and resource indicators (RFC 8707), issue 25. A client that registered itself
-- at /sso/oidc/register is marked (the console lists it as such); such clients are public (token_endpoint_auth_method
-- 'none', PKCE required) and may have asked for the refresh_token grant.
ALTER TABLE sso_clients
  ADD COLUMN registered_dynamically boolean NOT NULL DEFAULT false,
  ADD COLUMN grant_types text[] NOT NULL DEFAULT '{authorization_code,refresh_token}';

-- The resource (RFC 8707) an authorization request named: its code, the refresh tokens of its sign-in and every access
-- token issued from them carry it, and an access token is only for that audience (NULL: the userinfo of this issuer).
ALTER TABLE sso_codes ADD COLUMN resource text;
ALTER TABLE sso_refresh_tokens ADD COLUMN resource text;
ALTER TABLE sso_access_tokens ADD COLUMN audience text;

-- Down Migration
ALTER TABLE sso_access_tokens DROP COLUMN audience;
ALTER TABLE sso_refresh_tokens DROP COLUMN resource;
ALTER TABLE sso_codes DROP COLUMN resource;
ALTER TABLE sso_clients DROP COLUMN registered_dynamically, DROP COLUMN grant_types;
