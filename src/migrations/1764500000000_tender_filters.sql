-- Up Migration

-- Tender search that finds what people mean (src/data-api/tenders.ts, README "Tender data"):
-- * the procurement law a tender is run under;
-- * filters as lexemes of the search vector, so the GIN index intersects them with the words (as it did the country);
-- * classification labels (CPV in English, OKPD2 in Russian) and the buyer's name searchable;
-- * a thesaurus applied at query time with ts_rewrite, and a vocabulary that corrects one-letter typos.

-- levenshtein() for the typo correction; a trusted extension, so the database owner may create it.
CREATE EXTENSION IF NOT EXISTS fuzzystrmatch;

ALTER TABLE tenders ADD COLUMN law text;

-- A filter value as a lexeme with position 1 and weight D (text gets A, B and C): no query word can produce its
-- leading '~', '#' or '@', and ts_filter(search, '{d}') gives back exactly the filter lexemes (facets count them).
CREATE FUNCTION tender_filter_lexeme(kind text, value text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN '''' || replace(replace(kind || lower(value), '\', '\\'), '''', '''''') || ''':1';

-- The words of a buyer's name, stemmed and marked '~b:' without positions: the buyer filter matches them, the text
-- query never does, and facets do not count them.
CREATE FUNCTION tender_buyer_lexemes(buyer_name text) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN array_to_tsvector(ARRAY(SELECT '~b:' || word FROM unnest(tsvector_to_array(to_tsvector('russian'::regconfig, buyer_name))) AS word));

-- Weights: A the title, B the description and the buyer's name, C the classification labels, D the filter lexemes.
CREATE FUNCTION tender_search_document(t tenders) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN setweight(to_tsvector('russian'::regconfig, t.title), 'A') ||
    setweight(to_tsvector('russian'::regconfig, left(t.description, 4000) || ' ' || t.buyer_name), 'B') ||
    setweight(to_tsvector('russian'::regconfig,
      coalesce((SELECT string_agg(c ->> 'description', ' ') FROM jsonb_array_elements(t.classification) AS c), '')), 'C') ||
    (concat_ws(' ',
      tender_filter_lexeme('@', t.country),
      tender_filter_lexeme('~status:', t.status),
      tender_filter_lexeme('~source:', t.source_key),
      tender_filter_lexeme('~law:', t.law),
      tender_filter_lexeme('~currency:', t.value_currency),
      tender_filter_lexeme('~buyer:', t.buyer_id),
      (SELECT string_agg(tender_filter_lexeme('#' || lower(c ->> 'scheme') || ':', c ->> 'id'), ' ')
         FROM jsonb_array_elements(t.classification) AS c WHERE c ->> 'id' <> ''))::tsvector) ||
    tender_buyer_lexemes(t.buyer_name);

DROP TRIGGER tender_search_sync ON tenders;
DROP FUNCTION tender_search_sync();
DROP TABLE tender_search;
DROP FUNCTION tender_search_vector(text, text, text);

-- The narrow table full-text search reads (see 1764000000000_tender_search.sql), now with what filters and sorts need.
CREATE TABLE tender_search (
  id           text PRIMARY KEY REFERENCES tenders (id) ON DELETE CASCADE,
  country      char(2) NOT NULL,
  published_at timestamptz,
  deadline_at  timestamptz,
  value_amount numeric(20, 2),
  search       tsvector NOT NULL
);
INSERT INTO tender_search (id, country, published_at, deadline_at, value_amount, search)
  SELECT t.id, t.country, t.published_at, t.deadline_at, t.value_amount, tender_search_document(t) FROM tenders t;

SET LOCAL maintenance_work_mem = '256MB';
CREATE INDEX tender_search_idx ON tender_search USING gin (search);
-- Sort keys put missing values last in either direction; lists page through them by (key, id) (keyset cursors).
CREATE INDEX tender_search_newest_idx ON tender_search ((coalesce(published_at, '-infinity')), id);
CREATE INDEX tender_search_country_newest_idx ON tender_search (country, (coalesce(published_at, '-infinity')), id);
CREATE INDEX tender_search_deadline_idx ON tender_search ((coalesce(deadline_at, 'infinity')), id);
CREATE INDEX tender_search_value_asc_idx ON tender_search ((coalesce(value_amount, 'Infinity')), id);
CREATE INDEX tender_search_value_desc_idx ON tender_search ((coalesce(value_amount, '-Infinity')), id);

CREATE FUNCTION tender_search_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO tender_search (id, country, published_at, deadline_at, value_amount, search)
    VALUES (NEW.id, NEW.country, NEW.published_at, NEW.deadline_at, NEW.value_amount, tender_search_document(NEW))
    ON CONFLICT (id) DO UPDATE SET country = excluded.country, published_at = excluded.published_at,
      deadline_at = excluded.deadline_at, value_amount = excluded.value_amount, search = excluded.search;
  RETURN NULL;
END $$;
CREATE TRIGGER tender_search_sync AFTER INSERT OR UPDATE OF title, description, country, published_at, deadline_at,
  value_amount, value_currency, status, classification, buyer_name, buyer_id, law, source_key ON tenders
  FOR EACH ROW EXECUTE FUNCTION tender_search_sync();

-- The buyer filter: an id (exact) or the words of a name (all of them).
CREATE FUNCTION tender_buyer_query(buyer text) RETURNS tsquery LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN CASE WHEN buyer IS NULL THEN ''::tsquery ELSE
    (replace(tender_filter_lexeme('~buyer:', buyer), ''':1', '''')::tsquery ||
     coalesce((SELECT string_agg('''~b:' || replace(word, '''', '''''') || '''', ' & ')
               FROM unnest(tsvector_to_array(to_tsvector('russian'::regconfig, buyer))) AS word), '')::tsquery) END;

-- Facet counts gain the law.
DROP MATERIALIZED VIEW tender_facet_counts;
CREATE MATERIALIZED VIEW tender_facet_counts AS
  SELECT facet, value, country, count(*)::bigint AS tenders FROM (
    SELECT 'country' AS facet, country::text AS value, country FROM tenders
    UNION ALL SELECT 'source', source_key, country FROM tenders
    UNION ALL SELECT 'status', status, country FROM tenders
    UNION ALL SELECT 'law', law, country FROM tenders WHERE law IS NOT NULL
    UNION ALL SELECT 'currency', value_currency::text, country FROM tenders WHERE value_currency IS NOT NULL
    UNION ALL SELECT 'classification', (c ->> 'scheme') || ':' || (c ->> 'id'), country
      FROM tenders, jsonb_array_elements(classification) AS c
  ) AS facts
  WHERE value IS NOT NULL
  GROUP BY facet, value, country;
CREATE UNIQUE INDEX tender_facet_counts_key ON tender_facet_counts (facet, value, country);

-- The procurement thesaurus. A concept is a set of terms (words or phrases, Russian or English) that mean the same
-- thing; a concept may be narrower than another (diesel is a fuel). A query that contains a term finds every term of
-- its concept and of the concepts below it. Extend it with INSERTs in a new migration (README "Tender data").
CREATE TABLE tender_concepts (
  concept text PRIMARY KEY CHECK (concept ~ '^[a-z][a-z0-9_]*$'),
  broader text REFERENCES tender_concepts (concept)
);
CREATE TABLE tender_thesaurus (
  concept text NOT NULL REFERENCES tender_concepts (concept) ON DELETE CASCADE,
  term    text NOT NULL,
  target  tsquery GENERATED ALWAYS AS (plainto_tsquery('russian'::regconfig, term)) STORED,
  PRIMARY KEY (concept, term)
);

INSERT INTO tender_concepts (concept) VALUES
  ('medicines'), ('medical_equipment'), ('medical_consumables'), ('fuel'), ('food'), ('catering'), ('construction'),
  ('repair'), ('roads'), ('it'), ('office_supplies'), ('furniture'), ('vehicles'), ('vehicle_maintenance'), ('workwear'),
  ('building_materials'), ('books'), ('cleaning'), ('security'), ('electricity'), ('insurance'), ('passenger_transport'),
  ('training'), ('design'), ('water_supply'), ('ventilation'), ('landscaping'), ('communications'), ('supply'),
  ('services'), ('works'), ('procurement'), ('school'), ('hospital');
INSERT INTO tender_concepts (concept, broader) VALUES
  ('diesel', 'fuel'), ('petrol', 'fuel'), ('software', 'it'), ('computers', 'it'), ('it_services', 'it');

INSERT INTO tender_thesaurus (concept, term)
  SELECT concept, unnest(terms) FROM (VALUES
    ('medicines', ARRAY['лекарство', 'лекарственный', 'лекарственные средства', 'лекарственные препараты', 'медикаменты',
      'фармацевтическая продукция', 'фармацевтический', 'medicine', 'medicines', 'drugs', 'pharmaceutical',
      'pharmaceuticals', 'medicinal products']),
    ('medical_equipment', ARRAY['медицинское оборудование', 'медицинская техника', 'медтехника', 'аппараты медицинские',
      'medical equipment', 'medical devices', 'hospital equipment', 'diagnostic equipment']),
    ('medical_consumables', ARRAY['медицинские изделия', 'медицинские расходные материалы', 'расходные материалы медицинские',
      'медицинские инструменты', 'medical consumables', 'medical supplies', 'disposable medical']),
    ('fuel', ARRAY['топливо', 'ГСМ', 'горюче-смазочные материалы', 'нефтепродукты', 'fuel', 'fuels', 'petroleum products']),
    ('diesel', ARRAY['дизельное топливо', 'дизтопливо', 'солярка', 'diesel', 'gas oil']),
    ('petrol', ARRAY['бензин', 'автобензин', 'petrol', 'gasoline']),
    ('food', ARRAY['продукты питания', 'пищевые продукты', 'продовольствие', 'продовольственные товары', 'food', 'foodstuffs',
      'groceries']),
    ('catering', ARRAY['организация питания', 'услуги питания', 'горячее питание', 'обеспечение питанием', 'catering',
      'meal services', 'school meals']),
    ('construction', ARRAY['строительство', 'строительные работы', 'возведение', 'construction', 'building works',
      'new build']),
    ('repair', ARRAY['ремонт', 'ремонтные работы', 'капитальный ремонт', 'repair', 'repairs', 'refurbishment', 'renovation',
      'overhaul', 'resurfacing']),
    ('roads', ARRAY['дорога', 'дорожные работы', 'автомобильные дороги', 'асфальтирование', 'асфальтобетонное покрытие',
      'улично-дорожная сеть', 'road', 'roads', 'roadworks', 'highway', 'carriageway', 'resurfacing']),
    ('it', ARRAY['информационные технологии', 'ИТ', 'информационная система', 'information technology', 'ICT']),
    ('software', ARRAY['программное обеспечение', 'софт', 'лицензии на программное обеспечение', 'software',
      'software licences', 'software licenses']),
    ('computers', ARRAY['компьютер', 'компьютерная техника', 'ноутбук', 'персональный компьютер', 'оргтехника', 'computer',
      'computers', 'laptop', 'laptops', 'PC']),
    ('it_services', ARRAY['сопровождение информационной системы', 'техническая поддержка программного обеспечения',
      'IT support', 'system maintenance', 'software maintenance', 'information system maintenance']),
    ('office_supplies', ARRAY['канцелярские товары', 'канцтовары', 'канцелярские принадлежности', 'канцелярия',
      'office supplies', 'stationery']),
    ('furniture', ARRAY['мебель', 'furniture']),
    ('vehicles', ARRAY['автомобиль', 'легковой автомобиль', 'транспортные средства', 'автотранспорт', 'vehicle', 'vehicles',
      'car', 'cars', 'passenger cars']),
    ('vehicle_maintenance', ARRAY['техническое обслуживание автомобилей', 'ремонт автомобилей', 'автосервис',
      'vehicle maintenance', 'car servicing', 'fleet maintenance', 'vehicle repair']),
    ('workwear', ARRAY['спецодежда', 'специальная одежда', 'рабочая одежда', 'средства индивидуальной защиты', 'СИЗ',
      'workwear', 'protective clothing', 'work clothing', 'PPE']),
    ('building_materials', ARRAY['строительные материалы', 'стройматериалы', 'цемент', 'портландцемент',
      'building materials', 'construction materials', 'cement']),
    ('books', ARRAY['учебники', 'учебная литература', 'учебные пособия', 'книги', 'textbooks', 'books', 'school books']),
    ('cleaning', ARRAY['уборка', 'клининг', 'клининговые услуги', 'cleaning', 'janitorial']),
    ('security', ARRAY['охрана', 'охранные услуги', 'security services', 'guarding', 'security guards']),
    ('electricity', ARRAY['электроэнергия', 'электрическая энергия', 'электроснабжение', 'electricity',
      'electrical energy', 'electric power']),
    ('insurance', ARRAY['страхование', 'ОСАГО', 'страховые услуги', 'insurance']),
    ('passenger_transport', ARRAY['перевозка пассажиров', 'пассажирские перевозки', 'перевозка детей', 'школьные перевозки',
      'перевозка обучающихся', 'passenger transport', 'bus services', 'school bus', 'school transport', 'home-to-school transport']),
    ('training', ARRAY['обучение', 'повышение квалификации', 'профессиональное образование', 'training',
      'professional development']),
    ('design', ARRAY['проектная документация', 'проектирование', 'проектные работы', 'design services',
      'engineering services', 'architectural services']),
    ('water_supply', ARRAY['водопровод', 'водопроводные сети', 'водоснабжение', 'водоотведение', 'water supply',
      'water mains', 'water pipeline', 'water network']),
    ('ventilation', ARRAY['вентиляция', 'кондиционирование', 'ОВиК', 'ventilation', 'air conditioning', 'HVAC']),
    ('landscaping', ARRAY['благоустройство', 'озеленение', 'landscaping', 'grounds maintenance', 'green spaces']),
    ('communications', ARRAY['средства связи', 'мобильные телефоны', 'сотовые телефоны', 'смартфоны', 'mobile phones',
      'smartphones', 'mobile devices', 'telephones']),
    ('school', ARRAY['школа', 'школьный', 'общеобразовательная школа', 'school', 'schools']),
    ('hospital', ARRAY['больница', 'стационар', 'hospital', 'hospitals']),
    ('supply', ARRAY['поставка', 'supply', 'supplies', 'delivery']),
    ('services', ARRAY['услуги', 'оказание услуг', 'services', 'service']),
    ('works', ARRAY['работы', 'выполнение работ', 'works']),
    ('procurement', ARRAY['закупка', 'госзакупка', 'тендер', 'торги', 'procurement', 'tender', 'tendering', 'purchase'])
  ) AS concepts (concept, terms);

-- Everything a term of `name` may be found as: the terms of the concept and of the concepts below it, leaving out a
-- phrase that a shorter term of the family already finds («лекарственные средства» when «лекарственный» is one).
CREATE FUNCTION tender_concept_query(name text) RETURNS tsquery LANGUAGE sql STABLE AS $$
  WITH RECURSIVE family AS (
    SELECT name AS concept
    UNION SELECT c.concept FROM tender_concepts c JOIN family f ON c.broader = f.concept),
  terms AS (
    SELECT DISTINCT t.target FROM tender_thesaurus t JOIN family f USING (concept) WHERE numnode(t.target) > 0)
  SELECT string_agg('(' || a.target::text || ')', ' | ' ORDER BY a.target::text)::tsquery FROM terms a
  WHERE NOT EXISTS (SELECT 1 FROM terms b WHERE b.target <> a.target AND a.target @> b.target AND numnode(b.target) < numnode(a.target))
$$;

-- The words tenders use as written (titles, buyers, classification labels), for the typo correction; refreshed with
-- the facets (tender_vocabulary_refresh).
CREATE TABLE tender_vocabulary (
  word      text PRIMARY KEY,
  documents integer NOT NULL
);

-- Reads every tender, or a sample of about 100 000 when there are more (a typo is corrected towards common words; a
-- rare word is left as it is), plus the thesaurus's own words.
CREATE FUNCTION tender_vocabulary_refresh() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  total float8;
BEGIN
  SELECT reltuples INTO total FROM pg_class WHERE oid = 'tenders'::regclass;
  DELETE FROM tender_vocabulary;
  EXECUTE format(
    $q$INSERT INTO tender_vocabulary (word, documents)
       SELECT word, count(*) FROM tenders t %s,
         regexp_split_to_table(lower(t.title || ' ' || t.buyer_name || ' ' ||
           coalesce((SELECT string_agg(c ->> 'description', ' ') FROM jsonb_array_elements(t.classification) AS c), '')), '[^[:alpha:]]+') AS word
       WHERE length(word) >= 3 GROUP BY word$q$,
    CASE WHEN total <= 100000 THEN '' ELSE format('TABLESAMPLE SYSTEM (%s)', round((100 * 100000 / total)::numeric, 4)) END);
  INSERT INTO tender_vocabulary (word, documents)
    SELECT DISTINCT word, 0 FROM tender_thesaurus, regexp_split_to_table(lower(term), '[^[:alpha:]]+') AS word WHERE length(word) >= 3
    ON CONFLICT (word) DO NOTHING;
END $$;

-- A query as tenders are searched: web-search syntax (quotes, or, -word), then each word of four letters or more
-- that no tender uses is widened to the closest words they do use (an edit distance of 1, or 2 from six letters on,
-- same first letter), then every thesaurus term in it to its concept. Longer terms are rewritten first, so
-- «лекарственные средства» is one concept, not «лекарственные» and «средства».
CREATE FUNCTION tender_query(input text) RETURNS tsquery LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
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

-- Down Migration
DROP FUNCTION tender_query(text);
DROP FUNCTION tender_vocabulary_refresh();
DROP TABLE tender_vocabulary;
DROP FUNCTION tender_concept_query(text);
DROP TABLE tender_thesaurus, tender_concepts;
DROP MATERIALIZED VIEW tender_facet_counts;
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
DROP FUNCTION tender_buyer_query(text);
DROP TRIGGER tender_search_sync ON tenders;
DROP FUNCTION tender_search_sync();
DROP TABLE tender_search;
DROP FUNCTION tender_search_document(tenders);
DROP FUNCTION tender_buyer_lexemes(text);
DROP FUNCTION tender_filter_lexeme(text, text);
ALTER TABLE tenders DROP COLUMN law;
CREATE FUNCTION tender_search_vector(title text, description text, country text) RETURNS tsvector
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
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
CREATE INDEX tender_search_idx ON tender_search USING gin (search);
CREATE INDEX tender_search_published_idx ON tender_search (published_at DESC NULLS LAST, id);
CREATE INDEX tender_search_country_published_idx ON tender_search (country, published_at DESC NULLS LAST, id);
CREATE FUNCTION tender_search_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO tender_search (id, country, published_at, search)
    VALUES (NEW.id, NEW.country, NEW.published_at, tender_search_vector(NEW.title, NEW.description, NEW.country))
    ON CONFLICT (id) DO UPDATE SET country = excluded.country, published_at = excluded.published_at, search = excluded.search;
  RETURN NULL;
END $$;
CREATE TRIGGER tender_search_sync AFTER INSERT OR UPDATE OF title, description, country, published_at ON tenders
  FOR EACH ROW EXECUTE FUNCTION tender_search_sync();
