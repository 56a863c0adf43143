-- Up Migration

-- The service's processes connect as a role that owns nothing (src/db-roles.ts), and PostgreSQL lets only a table's
-- owner refresh a materialized view or ANALYZE a table (MAINTAIN, which grants that, comes with PostgreSQL 17). What
-- the processes do after tenders change therefore runs as the owner, in one function that does only that: the facet
-- and country counts, the search's statistics and the typo correction's vocabulary (refreshTenderFacets).
-- SECURITY DEFINER with a fixed search_path, so that no caller's objects stand in for ours.
CREATE FUNCTION tender_facets_refresh() RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  REFRESH MATERIALIZED VIEW CONCURRENTLY tender_facet_counts;
  ANALYZE tender_search;
  PERFORM tender_vocabulary_refresh();
END $$;

-- Down Migration
DROP FUNCTION tender_facets_refresh();
