-- Up Migration

-- Where tenders come from. Each enabled source is a Temporal Schedule running the sync workflow; its status is
-- derived from data_source_runs. `kind` picks the connector; `url` is the remote endpoint (none: disabled).
CREATE TABLE data_sources (
  key              text PRIMARY KEY CHECK (key ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
  name             text NOT NULL,
  country          char(2),
  kind             text NOT NULL CHECK (kind IN ('ocds', 'eis', 'ted', 'sample')),
  url              text,
  enabled          boolean NOT NULL DEFAULT true,
  interval_seconds integer NOT NULL DEFAULT 3600 CHECK (interval_seconds >= 60),
  -- Where the next sync resumes (a page token or a date), as the connector understands it.
  cursor           text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);

-- One row per sync workflow run; status, last_sync_at and the record count of a source come from here.
CREATE TABLE data_source_runs (
  run_id      text PRIMARY KEY,
  source_key  text NOT NULL REFERENCES data_sources (key) ON DELETE CASCADE,
  started_at  timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  outcome     text CHECK (outcome IN ('ok', 'partial', 'failed')),
  fetched     integer NOT NULL DEFAULT 0,
  upserted    integer NOT NULL DEFAULT 0,
  records     integer,
  error       text
);
CREATE INDEX data_source_runs_source_idx ON data_source_runs (source_key, started_at DESC);

-- Tenders, OCDS-aligned, plus the source's own record. One row per (source, source_id): re-syncing updates it.
CREATE TABLE tenders (
  id                text PRIMARY KEY,
  source_key        text NOT NULL REFERENCES data_sources (key),
  source_id         text NOT NULL,
  ocid              text,
  country           char(2) NOT NULL,
  title             text NOT NULL,
  description       text NOT NULL DEFAULT '',
  buyer_name        text NOT NULL DEFAULT '',
  buyer_id          text,
  value_amount      numeric(20, 2),
  value_currency    char(3),
  status            text NOT NULL DEFAULT 'active',
  procurement_method text,
  published_at      timestamptz,
  deadline_at       timestamptz,
  url               text,
  -- [{scheme, id, description}]: CPV, OKPD2, …
  classification    jsonb NOT NULL DEFAULT '[]',
  raw               jsonb NOT NULL DEFAULT '{}',
  sample            boolean NOT NULL DEFAULT false,
  -- The `russian` configuration stems Cyrillic words with the Russian stemmer and Latin ones with the English one.
  -- It also holds the lexeme '@<country>' (no query word can produce '@'), so a country filter is one more GIN
  -- posting list to intersect, never a scan of that country's rows looking for a word.
  search            tsvector GENERATED ALWAYS AS (
                      setweight(to_tsvector('russian', title), 'A') ||
                      setweight(to_tsvector('russian', left(description, 4000)), 'B') ||
                      ('''@' || lower(country) || '''')::tsvector) STORED,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  UNIQUE (source_key, source_id)
);
CREATE INDEX tenders_search_idx ON tenders USING gin (search);
CREATE INDEX tenders_published_idx ON tenders (published_at DESC NULLS LAST, id);
CREATE INDEX tenders_country_published_idx ON tenders (country, published_at DESC NULLS LAST, id);

-- Facet counts, refreshed after each sync and sample load: counting a million rows per request would not do.
CREATE MATERIALIZED VIEW tender_facet_counts AS
  SELECT facet, value, country, count(*)::bigint AS tenders FROM (
    SELECT 'country' AS facet, country::text AS value, country FROM tenders
    UNION ALL SELECT 'source', source_key, country FROM tenders
    UNION ALL SELECT 'status', status, country FROM tenders
    UNION ALL SELECT 'currency', value_currency::text, country FROM tenders WHERE value_currency IS NOT NULL
    UNION ALL SELECT 'classification', (c ->> 'scheme') || ':' || (c ->> 'id'), country
      FROM tenders, jsonb_array_elements(classification) AS c
  ) AS facts
  WHERE value IS NOT NULL
  GROUP BY facet, value, country;
CREATE UNIQUE INDEX tender_facet_counts_key ON tender_facet_counts (facet, value, country);

-- Supervisory practice: court and FAS decisions.
CREATE TABLE practice_decisions (
  id          text PRIMARY KEY,
  court       text NOT NULL,
  case_number text NOT NULL,
  decided_at  date NOT NULL,
  title       text NOT NULL,
  text        text NOT NULL,
  url         text,
  sample      boolean NOT NULL DEFAULT false,
  search      tsvector GENERATED ALWAYS AS (
                setweight(to_tsvector('russian', title), 'A') ||
                setweight(to_tsvector('russian', case_number || ' ' || court), 'B') ||
                setweight(to_tsvector('russian', text), 'C')) STORED,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX practice_decisions_search_idx ON practice_decisions USING gin (search);

CREATE TABLE knowledge_corpora (
  key         text PRIMARY KEY CHECK (key ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
  title       text NOT NULL,
  description text NOT NULL DEFAULT '',
  sample      boolean NOT NULL DEFAULT false,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE knowledge_documents (
  id         text PRIMARY KEY,
  corpus_key text NOT NULL REFERENCES knowledge_corpora (key) ON DELETE CASCADE,
  title      text NOT NULL,
  text       text NOT NULL,
  url        text,
  search     tsvector GENERATED ALWAYS AS (
               setweight(to_tsvector('russian', title), 'A') || setweight(to_tsvector('russian', text), 'B')) STORED,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX knowledge_documents_search_idx ON knowledge_documents USING gin (search);
CREATE INDEX knowledge_documents_corpus_idx ON knowledge_documents (corpus_key);

-- Requests per account and calendar month (UTC), summed over its keys; counted by one atomic upsert.
CREATE TABLE data_usage (
  account_id uuid NOT NULL REFERENCES data_accounts (id) ON DELETE CASCADE,
  month      date NOT NULL,
  used       bigint NOT NULL DEFAULT 0 CHECK (used >= 0),
  PRIMARY KEY (account_id, month)
);

-- Down Migration
DROP TABLE data_usage, knowledge_documents, knowledge_corpora, practice_decisions;
DROP MATERIALIZED VIEW tender_facet_counts;
DROP TABLE tenders, data_source_runs, data_sources;
