-- Up Migration

-- Whether a code was issued to the spec's authorize with the user's own cabinet token in Authorization (no consent
-- page: the site holds the person's token already) rather than after the person allowed the site in a browser. The
-- spec's POST /sso/token answers the whole profile; a browser sign-in whose OpenID Connect scope allowed less is
-- refused there, so that what the consent page listed is all the site gets.
ALTER TABLE sso_codes ADD COLUMN via_cabinet_token boolean NOT NULL DEFAULT false;

-- Down Migration
ALTER TABLE sso_codes DROP COLUMN via_cabinet_token;
