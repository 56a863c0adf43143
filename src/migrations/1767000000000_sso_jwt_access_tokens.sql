-- Up Migration

-- Issue 25, tokens and keys. The OpenID Connect token endpoint's access tokens become JWTs (RFC 9068) signed with the
-- SSO signing keys; a row per token stays, named by the token's `jti`, so that revocation, introspection, a revoked
-- grant and "sign out everywhere" still end a token whose signature stays valid. The opaque tokens issued before (at
-- most SSO_ACCESS_TOKEN_TTL_SECONDS old) end here: a client refreshes or signs in again.
DELETE FROM sso_access_tokens;
ALTER TABLE sso_access_tokens DROP CONSTRAINT sso_access_tokens_pkey;
ALTER TABLE sso_access_tokens DROP COLUMN token_hash, ADD COLUMN jti uuid PRIMARY KEY;

-- A signing key is published until retires_at: when a newer key replaces it, that is the newer key's not_before plus
-- the longest lifetime of a token it signed, so every token it signed expires while it is still published. Set when
-- the replacing key is made (NULL: not replaced yet). A retired key's private half is erased (private_sealed NULL).
ALTER TABLE sso_signing_keys ADD COLUMN retires_at timestamptz, ALTER COLUMN private_sealed DROP NOT NULL;
-- Keys replaced before: published a day after their replacement, as they were.
UPDATE sso_signing_keys k SET retires_at = n.next_not_before + interval '1 day'
  FROM (SELECT kid, lead(not_before) OVER (ORDER BY not_before, created_at) AS next_not_before FROM sso_signing_keys) n
 WHERE n.kid = k.kid AND n.next_not_before IS NOT NULL;

-- A refresh-token family has an absolute lifetime (SSO_REFRESH_FAMILY_MAX_SECONDS) from its first sign-in, which each
-- refresh token of the family carries.
ALTER TABLE sso_refresh_tokens ADD COLUMN family_started_at timestamptz NOT NULL DEFAULT now();
UPDATE sso_refresh_tokens r SET family_started_at = f.started
  FROM (SELECT family_id, min(created_at) AS started FROM sso_refresh_tokens GROUP BY family_id) f
 WHERE f.family_id = r.family_id;

-- Down Migration
ALTER TABLE sso_refresh_tokens DROP COLUMN family_started_at;
DELETE FROM sso_signing_keys WHERE private_sealed IS NULL;
ALTER TABLE sso_signing_keys DROP COLUMN retires_at, ALTER COLUMN private_sealed SET NOT NULL;
DELETE FROM sso_access_tokens;
ALTER TABLE sso_access_tokens DROP CONSTRAINT sso_access_tokens_pkey;
ALTER TABLE sso_access_tokens DROP COLUMN jti, ADD COLUMN token_hash bytea PRIMARY KEY;
