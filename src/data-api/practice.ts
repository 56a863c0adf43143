// Supervisory practice and knowledge corpora: full-text search over court decisions and reference documents.
import type { z } from 'zod';
import type { Db } from '../db.ts';
import { problem } from '../http/problem.ts';
import type { CorporaSchema, KnowledgeResultsSchema, PracticeResultsSchema } from './schemas.ts';
import { RANK_CANDIDATES } from './tenders.ts';

// Markdown bold marks the matched words: readable for people and for language models alike.
const HEADLINE = `'MaxWords=40, MinWords=15, MaxFragments=2, FragmentDelimiter=" … ", StartSel=**, StopSel=**'`;

export async function searchPractice(
  db: Db,
  input: { query: string; top_k: number },
): Promise<z.output<typeof PracticeResultsSchema>> {
  const result = await db.query<{
    id: string;
    title: string;
    court: string;
    decided_at: string;
    case_number: string;
    snippet: string;
    score: number;
    url: string | null;
  }>(
    `WITH query AS (SELECT websearch_to_tsquery('russian', $1) AS q),
     candidates AS MATERIALIZED (SELECT p.id, p.search FROM practice_decisions p, query WHERE p.search @@ query.q LIMIT ${RANK_CANDIDATES}),
     top AS (SELECT c.id, ts_rank(c.search, query.q, 32)::float8 AS score FROM candidates c, query ORDER BY score DESC, c.id LIMIT $2)
     SELECT p.id, p.title, p.court, to_char(p.decided_at, 'YYYY-MM-DD') AS decided_at, p.case_number, p.url, top.score,
       ts_headline('russian', p.text, query.q, ${HEADLINE}) AS snippet
     FROM top JOIN practice_decisions p ON p.id = top.id, query
     ORDER BY top.score DESC, p.decided_at DESC, p.id`,
    [input.query, input.top_k],
  );
  return { items: result.rows.map((row) => ({ ...row, score: Number(row.score) })) };
}

export async function searchKnowledge(
  db: Db,
  input: { query: string; top_k: number; corpus_keys?: string[] },
): Promise<z.output<typeof KnowledgeResultsSchema>> {
  const keys = input.corpus_keys && input.corpus_keys.length > 0 ? [...new Set(input.corpus_keys)] : undefined;
  if (keys) {
    const known = await db.query<{ key: string }>('SELECT key FROM knowledge_corpora WHERE key = ANY($1)', [keys]);
    const unknown = keys.filter((key) => !known.rows.some((row) => row.key === key));
    if (unknown.length > 0) {
      throw problem(
        'unknown_corpus',
        `Unknown corpus ${unknown.join(', ')}; GET /v1/corpora lists the available ones.`,
      );
    }
  }
  const result = await db.query<{
    id: string;
    corpus_key: string;
    title: string;
    snippet: string;
    score: number;
    url: string | null;
  }>(
    `WITH query AS (SELECT websearch_to_tsquery('russian', $1) AS q),
     candidates AS MATERIALIZED (
       SELECT d.id, d.search FROM knowledge_documents d, query
       WHERE d.search @@ query.q AND ($3::text[] IS NULL OR d.corpus_key = ANY($3)) LIMIT ${RANK_CANDIDATES}),
     top AS (SELECT c.id, ts_rank(c.search, query.q, 32)::float8 AS score FROM candidates c, query ORDER BY score DESC, c.id LIMIT $2)
     SELECT d.id, d.corpus_key, d.title, d.url, top.score, ts_headline('russian', d.text, query.q, ${HEADLINE}) AS snippet
     FROM top JOIN knowledge_documents d ON d.id = top.id, query
     ORDER BY top.score DESC, d.id`,
    [input.query, input.top_k, keys ?? null],
  );
  return { items: result.rows.map((row) => ({ ...row, score: Number(row.score) })) };
}

export async function listCorpora(db: Db): Promise<z.output<typeof CorporaSchema>> {
  const result = await db.query<{
    key: string;
    title: string;
    description: string;
    documents: number;
    sample: boolean;
  }>(
    `SELECT c.key, c.title, c.description, c.sample, (SELECT count(*) FROM knowledge_documents d WHERE d.corpus_key = c.key)::int AS documents
     FROM knowledge_corpora c ORDER BY c.key`,
  );
  return { items: result.rows };
}
