// The filters, sorts and cursors of tender lists as SQL over tender_search (alias s), and the query text split into
// the concepts a score counts. Equality filters are lexemes of the search vector (see the migration
// 1764500000000_tender_filters.sql), so the GIN index intersects them with the words; ranges are columns.
import type { ClassificationPrefix, TenderCursor, TenderFilters, TenderSort } from './schemas.ts';

/** Collects the parameters of one statement; each call answers the placeholder of the value it was given. */
export class Params {
  readonly values: unknown[] = [];
  /** Another statement that starts with these parameters. */
  copy(): Params {
    const copy = new Params();
    copy.values.push(...this.values);
    return copy;
  }
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/** A filter value as the lexeme the search vector holds (tender_filter_lexeme in SQL), quoted for a tsquery. */
const lexeme = (kind: string, value: string) => `'${(kind + value.toLowerCase()).replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

function classificationQuery(prefixes: ClassificationPrefix[]): string {
  const terms = prefixes.flatMap(({ scheme, code }) =>
    (scheme ? [scheme] : ['cpv', 'okpd2']).map((name) => `${lexeme(`#${name}:`, code)}:*`),
  );
  return `(${terms.join(' | ')})`;
}

/**
 * The filters as a tsquery expression (lexemes) and conditions on ranges; either may be empty. Ranges come as `keys`,
 * written on the expressions the sort indexes hold (missing values as ±infinity), so a list sorted by deadline from
 * today, or by value above a bound, starts at the bound instead of reading every earlier entry; as `columns`, which
 * no index serves, for ranked searches whose candidates the GIN index finds; or not at all (`none`).
 */
export function filterSql(filters: TenderFilters, params: Params, ranges: 'keys' | 'columns' | 'none' = 'keys'): { lexemes?: string; conditions: string[] } {
  const terms: string[] = [];
  if (filters.country) terms.push(lexeme('@', filters.country));
  if (filters.status) terms.push(lexeme('~status:', filters.status));
  if (filters.source) terms.push(lexeme('~source:', filters.source));
  if (filters.law) terms.push(lexeme('~law:', filters.law));
  if (filters.currency) terms.push(lexeme('~currency:', filters.currency));
  if (filters.classification) terms.push(classificationQuery(filters.classification));
  const parts = terms.length > 0 ? [`${params.add(terms.join(' & '))}::tsquery`] : [];
  if (filters.buyer) parts.push(`tender_buyer_query(${params.add(filters.buyer)})`);

  const conditions: string[] = [];
  if (ranges === 'none') return { lexemes: parts.length > 0 ? `(${parts.join(' && ')})` : undefined, conditions };
  const key = (column: string, missing: string) => (ranges === 'keys' ? `coalesce(s.${column}, '${missing}')` : `s.${column}`);
  const range = (column: string, missing: string, from: string | undefined, to: string | undefined) => {
    if (from) conditions.push(`${key(column, missing)} >= ${params.add(from)}::timestamptz AND s.${column} IS NOT NULL`);
    // A date alone as the upper bound means the whole of that day.
    if (to) conditions.push(`${key(column, missing)} ${to.length === 10 ? `< ${params.add(to)}::date + 1` : `<= ${params.add(to)}::timestamptz`} AND s.${column} IS NOT NULL`);
  };
  range('deadline_at', 'infinity', filters.deadline_from, filters.deadline_to);
  range('published_at', '-infinity', filters.published_from, filters.published_to);
  if (filters.value_min !== undefined) conditions.push(`${key('value_amount', 'Infinity')} >= ${params.add(filters.value_min)} AND s.value_amount IS NOT NULL`);
  if (filters.value_max !== undefined) conditions.push(`${key('value_amount', 'Infinity')} <= ${params.add(filters.value_max)} AND s.value_amount IS NOT NULL`);
  return { lexemes: parts.length > 0 ? `(${parts.join(' && ')})` : undefined, conditions };
}

/**
 * Each sort as its keys, all in one direction, so a page after a cursor is one row comparison. Missing values sort
 * last either way; the id settles ties. The expressions match the indexes of tender_search.
 */
const SORT_KEYS: Record<TenderSort, { keys: Array<{ sql: (alias: string) => string; type: string }>; direction: 'ASC' | 'DESC' }> = {
  relevance: {
    keys: [{ sql: (a) => `${a}.score`, type: 'float8' }, { sql: (a) => `coalesce(${a}.published_at, '-infinity')`, type: 'timestamptz' }],
    direction: 'DESC',
  },
  newest: { keys: [{ sql: (a) => `coalesce(${a}.published_at, '-infinity')`, type: 'timestamptz' }], direction: 'DESC' },
  deadline: { keys: [{ sql: (a) => `coalesce(${a}.deadline_at, 'infinity')`, type: 'timestamptz' }], direction: 'ASC' },
  value_asc: { keys: [{ sql: (a) => `coalesce(${a}.value_amount, 'Infinity')`, type: 'numeric' }], direction: 'ASC' },
  value_desc: { keys: [{ sql: (a) => `coalesce(${a}.value_amount, '-Infinity')`, type: 'numeric' }], direction: 'DESC' },
};

/** ORDER BY, the keys of an item as text (for its cursor), and the condition for the items after a cursor. */
export function sortSql(sort: TenderSort, alias: string, params: Params, cursor?: TenderCursor) {
  const { keys, direction } = SORT_KEYS[sort];
  const expressions = [...keys.map((key) => key.sql(alias)), `${alias}.id`];
  const after = cursor
    ? `(${expressions.join(', ')}) ${direction === 'DESC' ? '<' : '>'} (${[...keys.map((key) => key.type), 'text']
        .map((type, i) => `${params.add(cursor.keys[i])}::${type}`)
        .join(', ')})`
    : undefined;
  return {
    orderBy: expressions.map((expression) => `${expression} ${direction}`).join(', '),
    cursorKeys: `ARRAY[${expressions.map((expression) => `${expression}::text`).join(', ')}]`,
    after,
  };
}

/** A concept of the query as score counts it: found in the title, the description or buyer, a classification label. */
export interface Concept {
  title: string;
  body: string;
  label: string;
  any: string;
}

/**
 * The positive top-level parts of a tsquery (as PostgreSQL prints it): `'a' & ( 'b' | 'c' ) & !'d'` has the concepts
 * a and (b | c). A query whose top level is an «or» is one concept. Each comes restricted to the title (A), to the
 * description and buyer (B) and to the classification labels (C).
 */
export function concepts(tsquery: string): Concept[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  let topLevelOr = false;
  for (let i = 0; i < tsquery.length; i++) {
    const char = tsquery[i];
    if (char === "'") {
      if (quoted && tsquery[i + 1] === "'") i++;
      else quoted = !quoted;
    } else if (!quoted && char === '(') depth++;
    else if (!quoted && char === ')') depth--;
    else if (!quoted && depth === 0 && char === '|') topLevelOr = true;
    else if (!quoted && depth === 0 && char === '&') {
      parts.push(tsquery.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(tsquery.slice(start));
  const positive = (topLevelOr ? [tsquery] : parts).map((part) => part.trim()).filter((part) => part && !part.startsWith('!'));
  const weighted = (part: string, weight: string) => part.replace(/'((?:[^']|'')*)'(:\*)?/g, (_m, word: string, prefix = '') => `'${word}'${prefix || ':'}${weight}`);
  return positive.map((part) => ({ title: weighted(part, 'A'), body: weighted(part, 'B'), label: weighted(part, 'C'), any: part }));
}
