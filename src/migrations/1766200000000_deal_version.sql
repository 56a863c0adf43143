-- Up Migration

-- How many changes the deal's workflow has written: a change names the version it follows and writes only what it
-- changed when PostgreSQL is at that version; at any other (a write PostgreSQL lost, a retried write that had
-- committed) it writes the whole deal as the workflow holds it (docs/performance.md, "Records and healing").
ALTER TABLE deals ADD COLUMN version bigint NOT NULL DEFAULT 0;

-- Down Migration
ALTER TABLE deals DROP COLUMN version;
