-- Up Migration

-- The language a user's mail is written in. Russian until the user picks English in the cabinet profile.
ALTER TABLE users ADD COLUMN locale text NOT NULL DEFAULT 'ru' CHECK (locale IN ('ru', 'en'));

-- Down Migration
ALTER TABLE users DROP COLUMN locale;
