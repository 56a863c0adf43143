-- Up Migration

-- Selective searches with filters within their latency goal at a million tenders (README "Tender data",
-- src/data-api/tenders.ts, SEARCH_SHARDS): the search vectors in eight shards by a hash of the tender's id, each with a
-- GIN index of its own. A bitmap scan of a GIN index finds every match before the first is read, and a search ranks at
-- most 2000 of them: «ноутбуков» within roubles matched 23 000 tenders and «road repair» within CPV 452 11 500, each
-- found whole (about 20 ms) for 2000 of them. The search now reads the shards one after another and stops in the one
-- where its candidates are complete; a query matching fewer reads them all, as one index. The index of the whole table
-- stays for lists and facets. A shard's index is an eighth of it (about 30 MB at a million tenders).
-- The expression must stay as the search writes it: (hashtext(s.id) & 7) = <shard>.
SET LOCAL maintenance_work_mem = '256MB';
CREATE INDEX tender_search_shard0_idx ON tender_search USING gin (search) WHERE (hashtext(id) & 7) = 0;
CREATE INDEX tender_search_shard1_idx ON tender_search USING gin (search) WHERE (hashtext(id) & 7) = 1;
CREATE INDEX tender_search_shard2_idx ON tender_search USING gin (search) WHERE (hashtext(id) & 7) = 2;
CREATE INDEX tender_search_shard3_idx ON tender_search USING gin (search) WHERE (hashtext(id) & 7) = 3;
CREATE INDEX tender_search_shard4_idx ON tender_search USING gin (search) WHERE (hashtext(id) & 7) = 4;
CREATE INDEX tender_search_shard5_idx ON tender_search USING gin (search) WHERE (hashtext(id) & 7) = 5;
CREATE INDEX tender_search_shard6_idx ON tender_search USING gin (search) WHERE (hashtext(id) & 7) = 6;
CREATE INDEX tender_search_shard7_idx ON tender_search USING gin (search) WHERE (hashtext(id) & 7) = 7;

-- Down Migration
DROP INDEX tender_search_shard0_idx, tender_search_shard1_idx, tender_search_shard2_idx, tender_search_shard3_idx,
  tender_search_shard4_idx, tender_search_shard5_idx, tender_search_shard6_idx, tender_search_shard7_idx;
