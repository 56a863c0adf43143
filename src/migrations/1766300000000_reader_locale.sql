-- Up Migration

-- The language a marketplace gives for a deal's buyer and seller (POST /api/mkt/deals buyer_locale, seller_locale):
-- the accounts the deal makes are written in it, and an account whose person never chose a language follows it.
ALTER TABLE deals ADD COLUMN buyer_locale text CHECK (buyer_locale IN ('ru', 'en')),
                  ADD COLUMN seller_locale text CHECK (seller_locale IN ('ru', 'en'));

-- Whether the person chose their language themselves (the profile, a page's language switch while signed in, their
-- own sign-up): a language they chose is never replaced by the one a marketplace or an administrator gives.
-- English could only be chosen by the person until now, so an English account counts as chosen.
ALTER TABLE users ADD COLUMN locale_chosen boolean NOT NULL DEFAULT false;
UPDATE users SET locale_chosen = true WHERE locale = 'en';

-- Down Migration
ALTER TABLE users DROP COLUMN locale_chosen;
ALTER TABLE deals DROP COLUMN seller_locale, DROP COLUMN buyer_locale;
