-- Up Migration

-- The person's time zone (an IANA name, checked with Intl when given), for the times their pages and mails show;
-- null: Moscow time, where the service's people mostly are.
ALTER TABLE users ADD COLUMN time_zone text CHECK (length(time_zone) <= 64);

-- Down Migration
ALTER TABLE users DROP COLUMN time_zone;
