-- Up Migration

-- Selective searches within their latency goal at a million tenders (README "Tender data", src/data-api/tenders.ts):
-- * the thesaurus rewrites each term once: ts_rewrite applied its rules one after another to the query it was
--   rewriting, so a later rule rewrote the terms an earlier one had put in («cars» became the vehicles concept, whose
--   «vehicles» became it again: 'vehicl' three times, and «ремонт автомобилей» widened to every kind of repair). Terms
--   now become a placeholder of their concept first, and the placeholders their concepts' terms after: each lexeme
--   once, a query a third of the size, which the index and the scoring read once per candidate;
-- * tender_search_frequencies: the share of tenders holding each lexeme of a query, from the planner's statistics
--   (ANALYZE's most common elements), so the search can leave the common parts of a query (a generic word, a filter
--   most tenders pass) out of the index scan and test them on the candidates instead.

-- A query as tenders are searched (see 1764500000000_tender_filters.sql): web-search syntax, the typo step, then the
-- thesaurus in two passes. '§concept' is a placeholder no text can produce (the parser drops '§').
CREATE OR REPLACE FUNCTION tender_query(input text) RETURNS tsquery LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
DECLARE
  q tsquery := websearch_to_tsquery('russian'::regconfig, input);
  typo text;
  near tsquery;
BEGIN
  FOR typo IN
    SELECT DISTINCT w FROM regexp_split_to_table(lower(input), '[^[:alpha:]]+') AS w
    WHERE length(w) >= 4 AND NOT EXISTS (SELECT 1 FROM tender_vocabulary v WHERE v.word = w)
  LOOP
    SELECT string_agg(plainto_tsquery('russian'::regconfig, c.word)::text, ' | ')::tsquery INTO near FROM (
      SELECT v.word, rank() OVER (ORDER BY levenshtein(v.word, typo)) AS closest FROM tender_vocabulary v
      WHERE left(v.word, 1) = left(typo, 1) AND abs(length(v.word) - length(typo)) <= 2
        AND levenshtein_less_equal(v.word, typo, 2) <= CASE WHEN length(typo) < 6 THEN 1 ELSE 2 END) AS c
    WHERE c.closest = 1 AND numnode(plainto_tsquery('russian'::regconfig, c.word)) > 0;
    IF near IS NOT NULL AND numnode(plainto_tsquery('russian'::regconfig, typo)) > 0 THEN
      q := ts_rewrite(q, plainto_tsquery('russian'::regconfig, typo), plainto_tsquery('russian'::regconfig, typo) || near);
    END IF;
  END LOOP;
  -- Longer terms first, so «лекарственные средства» is one concept, not «лекарственные» and «средства».
  q := ts_rewrite(q, format(
    $r$SELECT t.target, ('''§' || t.concept || '''')::tsquery FROM tender_thesaurus t
       WHERE numnode(t.target) > 0 AND %L::tsquery @> t.target ORDER BY numnode(t.target) DESC, t.concept, t.term$r$, q::text));
  RETURN ts_rewrite(q, format(
    $r$SELECT ('''§' || c.concept || '''')::tsquery, tender_concept_query(c.concept) FROM tender_concepts c
       WHERE %L::tsquery @> ('''§' || c.concept || '''')::tsquery$r$, q::text));
END $$;

-- {"default": share, "lexemes": {"lexeme": share, "prefix:*": share, …}} for the operands of q: ANALYZE's share of
-- tender_search rows whose vector holds each (a prefix: the sum over the common lexemes it starts, at most 1); a lexeme
-- too rare to be among the most common elements gets half the rarest one's share, as the planner assumes
-- (ts_selfuncs.c), and without statistics the planner's default 0.005.
CREATE FUNCTION tender_search_frequencies(q tsquery) RETURNS jsonb LANGUAGE plpgsql STABLE AS $$
DECLARE
  elems text[];
  freqs real[];
  floor float8 := 0.005;
BEGIN
  SELECT s.most_common_elems::text::text[], s.most_common_elem_freqs INTO elems, freqs
  FROM pg_stats s JOIN pg_namespace n ON n.nspname = s.schemaname JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = s.tablename
  WHERE c.oid = 'tender_search'::regclass AND s.attname = 'search';
  IF elems IS NOT NULL THEN
    floor := least(floor, freqs[cardinality(elems) + 1] / 2);
  END IF;
  RETURN jsonb_build_object('default', floor, 'lexemes', (SELECT coalesce(jsonb_object_agg(o.key, o.share), '{}') FROM (
    SELECT m.lexeme || CASE WHEN m.prefix THEN ':*' ELSE '' END AS key,
      least(1, coalesce(CASE WHEN m.prefix
        THEN (SELECT sum(e.freq) FROM unnest(elems, freqs[1:cardinality(elems)]) AS e(elem, freq) WHERE starts_with(e.elem, m.lexeme))
        ELSE freqs[array_position(elems, m.lexeme)] END, floor)) AS share
    FROM (SELECT DISTINCT replace(r[1], '''''', '''') AS lexeme, coalesce(r[2], '') LIKE '%*%' AS prefix
          FROM regexp_matches(q::text, '''((?:[^'']|'''')*)''(:[*A-D]+)?', 'g') AS r) AS m) AS o));
END $$;

-- Down Migration
DROP FUNCTION tender_search_frequencies(tsquery);
CREATE OR REPLACE FUNCTION tender_query(input text) RETURNS tsquery LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
DECLARE
  q tsquery := websearch_to_tsquery('russian'::regconfig, input);
  typo text;
  near tsquery;
BEGIN
  FOR typo IN
    SELECT DISTINCT w FROM regexp_split_to_table(lower(input), '[^[:alpha:]]+') AS w
    WHERE length(w) >= 4 AND NOT EXISTS (SELECT 1 FROM tender_vocabulary v WHERE v.word = w)
  LOOP
    SELECT string_agg(plainto_tsquery('russian'::regconfig, c.word)::text, ' | ')::tsquery INTO near FROM (
      SELECT v.word, rank() OVER (ORDER BY levenshtein(v.word, typo)) AS closest FROM tender_vocabulary v
      WHERE left(v.word, 1) = left(typo, 1) AND abs(length(v.word) - length(typo)) <= 2
        AND levenshtein_less_equal(v.word, typo, 2) <= CASE WHEN length(typo) < 6 THEN 1 ELSE 2 END) AS c
    WHERE c.closest = 1 AND numnode(plainto_tsquery('russian'::regconfig, c.word)) > 0;
    IF near IS NOT NULL AND numnode(plainto_tsquery('russian'::regconfig, typo)) > 0 THEN
      q := ts_rewrite(q, plainto_tsquery('russian'::regconfig, typo), plainto_tsquery('russian'::regconfig, typo) || near);
    END IF;
  END LOOP;
  RETURN ts_rewrite(q, format(
    'SELECT t.target, tender_concept_query(t.concept) FROM tender_thesaurus t
     WHERE numnode(t.target) > 0 AND %L::tsquery @> t.target ORDER BY numnode(t.target) DESC, t.concept, t.term', q::text));
END $$;
