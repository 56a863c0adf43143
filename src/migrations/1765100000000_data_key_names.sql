-- Up Migration

-- Data keys become things a user can see and revoke in the cabinet: a public id (the hash stays the only way to find
-- a key from what is presented), a name the user gives it, and a display prefix (`svc_mcp_` and the next 4 characters
-- of 43 random ones: enough to recognise a key, never enough to use it). The volatile default gives every existing key
-- its own id. Keys issued before this migration keep working; their prefix was never stored and cannot be recovered
-- from the hash, so it stays NULL ("unknown") and the cabinet shows such a key by its name and dates.
ALTER TABLE data_keys
  ADD COLUMN id uuid NOT NULL DEFAULT gen_random_uuid(),
  ADD COLUMN name text NOT NULL DEFAULT '',
  ADD COLUMN prefix text CHECK (prefix ~ '^svc_mcp_[A-Za-z0-9_-]{4}$');
ALTER TABLE data_keys ADD CONSTRAINT data_keys_id_key UNIQUE (id);

-- Down Migration
ALTER TABLE data_keys DROP CONSTRAINT data_keys_id_key;
ALTER TABLE data_keys DROP COLUMN prefix, DROP COLUMN name, DROP COLUMN id;
