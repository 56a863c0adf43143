-- Up Migration

-- How the sign-in that started a refresh family was made (RFC 8176 amr values, from its code), copied to each refresh
-- token of the family as auth_time is: an ID token issued on a refresh says the original authentication's auth_time,
-- amr and acr (OpenID Connect Core 12.2), and acr follows from amr (src/sso/claims.ts). Null for families started
-- before codes recorded it, whose refreshed ID tokens then carry neither claim, as their first ones did.
ALTER TABLE sso_refresh_tokens ADD COLUMN amr text[];

-- Down Migration
ALTER TABLE sso_refresh_tokens DROP COLUMN amr;
