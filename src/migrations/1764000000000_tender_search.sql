-- Up Migration

-- Full-text search over tenders reads this narrow table instead of the wide `tenders` rows (raw records, JSONB):
-- a match costs one small row, and the newest-first walk for common words (see src/data-api/tenders.ts) reads
-- rows that stay in memory. A trigger keeps it in step with every writer of `tenders`.
CREATE FUNCTION tender_search_vector(title text, description text, country text) RETURNS tsvector
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  -- The `russian` configuration stems Cyrillic words with the Russian stemmer and Latin ones with the English one.
  -- The lexeme '@<country>' (no query word can produce '@') makes a country filter one more GIN posting list to
  -- intersect, never a scan of that country's rows looking for a word.
  RETURN setweight(to_tsvector('russian'::regconfig, title), 'A') ||
         setweight(to_tsvector('russian'::regconfig, left(description, 4000)), 'B') ||
         ('''@' || lower(country) || '''')::tsvector;

CREATE TABLE tender_search (
  id           text PRIMARY KEY REFERENCES tenders (id) ON DELETE CASCADE,
  country      char(2) NOT NULL,
  published_at timestamptz,
  search       tsvector NOT NULL
);

INSERT INTO tender_search (id, country, published_at, search)
  SELECT id, country, published_at, tender_search_vector(title, description, country) FROM tenders;

-- Building the GIN index over existing rows is much faster with room to sort in.
SET LOCAL maintenance_work_mem = '256MB';
CREATE INDEX tender_search_idx ON tender_search USING gin (search);
CREATE INDEX tender_search_published_idx ON tender_search (published_at DESC NULLS LAST, id);
CREATE INDEX tender_search_country_published_idx ON tender_search (country, published_at DESC NULLS LAST, id);
ALTER TABLE tenders DROP COLUMN search;

CREATE FUNCTION tender_search_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO tender_search (id, country, published_at, search)
    VALUES (NEW.id, NEW.country, NEW.published_at, tender_search_vector(NEW.title, NEW.description, NEW.country))
    ON CONFLICT (id) DO UPDATE SET country = excluded.country, published_at = excluded.published_at, search = excluded.search;
  RETURN NULL;
END $$;
CREATE TRIGGER tender_search_sync AFTER INSERT OR UPDATE OF title, description, country, published_at ON tenders
  FOR EACH ROW EXECUTE FUNCTION tender_search_sync();

-- The planner's estimate of the share of tenders a query matches (0..1), from the column statistics; it lets the
-- search pick its plan before reading a posting list.
CREATE FUNCTION tender_search_share(query tsquery) RETURNS float8 LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  plan json;
  total float8;
BEGIN
  EXECUTE format('EXPLAIN (FORMAT JSON) SELECT 1 FROM tender_search WHERE search @@ %L::tsquery', query::text) INTO plan;
  SELECT reltuples INTO total FROM pg_class WHERE oid = 'tender_search'::regclass;
  RETURN least(1, (plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8 / greatest(total, 1));
END $$;

-- Down Migration
DROP FUNCTION tender_search_share(tsquery);
DROP TRIGGER tender_search_sync ON tenders;
DROP FUNCTION tender_search_sync();
DROP TABLE tender_search;
DROP FUNCTION tender_search_vector(text, text, text);
ALTER TABLE tenders ADD COLUMN search tsvector GENERATED ALWAYS AS (
  setweight(to_tsvector('russian', title), 'A') || setweight(to_tsvector('russian', left(description, 4000)), 'B') ||
  ('''@' || lower(country) || '''')::tsvector) STORED;
CREATE INDEX tenders_search_idx ON tenders USING gin (search);
