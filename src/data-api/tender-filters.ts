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
const lexeme = (kind: string, value: string) =>
  `'${(kind + value.toLowerCase()).replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

function classificationQuery(prefixes: ClassificationPrefix[]): string {
  const terms = prefixes.flatMap(({ scheme, code }) =>
    (scheme ? [scheme] : ['cpv', 'okpd2']).map((name) => `${lexeme(`#${name}:`, code)}:*`),
  );
  return `(${terms.join(' | ')})`;
}

/**
 * The filters as a tsquery expression (lexemes) and conditions on ranges; either may be empty. Ranges come as `keys`,
 * written on the expressions the sort indexes hold (missing values as ±infinity), so a list sorted by deadline from
 * today, or by value above a bound, starts at the bound instead of reading every earlier entry, and a search may
 * intersect a selective range with what the GIN index finds; as `columns`, which no index serves (a range most
 * tenders pass is tested on the candidates); or not at all (`none`). `lexemes: false` leaves the lexemes out.
 */
export function filterSql(
  filters: TenderFilters,
  params: Params,
  ranges: 'keys' | 'columns' | 'none' = 'keys',
  lexemes = true,
): { lexemes?: string; conditions: string[] } {
  const terms: string[] = [];
  if (filters.country) terms.push(lexeme('@', filters.country));
  if (filters.status) terms.push(lexeme('~status:', filters.status));
  if (filters.source) terms.push(lexeme('~source:', filters.source));
  if (filters.law) terms.push(lexeme('~law:', filters.law));
  if (filters.currency) terms.push(lexeme('~currency:', filters.currency));
  if (filters.classification) terms.push(classificationQuery(filters.classification));
  const parts = lexemes && terms.length > 0 ? [`${params.add(terms.join(' & '))}::tsquery`] : [];
  if (lexemes && filters.buyer) parts.push(`tender_buyer_query(${params.add(filters.buyer)})`);

  const conditions: string[] = [];
  if (ranges === 'none') return { lexemes: parts.length > 0 ? `(${parts.join(' && ')})` : undefined, conditions };
  const key = (column: string, missing: string) =>
    ranges === 'keys' ? `coalesce(s.${column}, '${missing}')` : `s.${column}`;
  const range = (column: string, missing: string, from: string | undefined, to: string | undefined) => {
    if (from)
      conditions.push(`${key(column, missing)} >= ${params.add(from)}::timestamptz AND s.${column} IS NOT NULL`);
    // A date alone as the upper bound means the whole of that day.
    if (to)
      conditions.push(
        `${key(column, missing)} ${to.length === 10 ? `< ${params.add(to)}::date + 1` : `<= ${params.add(to)}::timestamptz`} AND s.${column} IS NOT NULL`,
      );
  };
  range('deadline_at', 'infinity', filters.deadline_from, filters.deadline_to);
  range('published_at', '-infinity', filters.published_from, filters.published_to);
  if (filters.value_min !== undefined)
    conditions.push(
      `${key('value_amount', 'Infinity')} >= ${params.add(filters.value_min)} AND s.value_amount IS NOT NULL`,
    );
  if (filters.value_max !== undefined)
    conditions.push(
      `${key('value_amount', 'Infinity')} <= ${params.add(filters.value_max)} AND s.value_amount IS NOT NULL`,
    );
  return { lexemes: parts.length > 0 ? `(${parts.join(' && ')})` : undefined, conditions };
}

/**
 * Each sort as its keys, all in one direction, so a page after a cursor is one row comparison. Missing values sort
 * last either way; the id settles ties. The expressions match the indexes of tender_search.
 */
const SORT_KEYS: Record<
  TenderSort,
  { keys: Array<{ sql: (alias: string) => string; type: string }>; direction: 'ASC' | 'DESC' }
> = {
  relevance: {
    keys: [
      { sql: (a) => `${a}.score`, type: 'float8' },
      { sql: (a) => `coalesce(${a}.published_at, '-infinity')`, type: 'timestamptz' },
    ],
    direction: 'DESC',
  },
  newest: {
    keys: [{ sql: (a) => `coalesce(${a}.published_at, '-infinity')`, type: 'timestamptz' }],
    direction: 'DESC',
  },
  deadline: { keys: [{ sql: (a) => `coalesce(${a}.deadline_at, 'infinity')`, type: 'timestamptz' }], direction: 'ASC' },
  value_asc: { keys: [{ sql: (a) => `coalesce(${a}.value_amount, 'Infinity')`, type: 'numeric' }], direction: 'ASC' },
  value_desc: {
    keys: [{ sql: (a) => `coalesce(${a}.value_amount, '-Infinity')`, type: 'numeric' }],
    direction: 'DESC',
  },
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
  const positive = (topLevelOr ? [tsquery] : parts)
    .map((part) => part.trim())
    .filter((part) => part && !part.startsWith('!'));
  const weighted = (part: string, weight: string) =>
    part.replace(/'((?:[^']|'')*)'(:\*)?/g, (_m, word: string, prefix = '') => `'${word}'${prefix || ':'}${weight}`);
  return positive.map((part) => ({
    title: weighted(part, 'A'),
    body: weighted(part, 'B'),
    label: weighted(part, 'C'),
    any: part,
  }));
}

/** A tsquery as PostgreSQL prints it, as a tree: lexemes (quoted, with their `:*` or weight suffix) and operators. */
export type QueryNode =
  | { kind: 'lexeme'; text: string; key: string }
  | { kind: 'not'; operand: QueryNode }
  | { kind: 'and' | 'or'; operands: QueryNode[] }
  | { kind: 'phrase'; operator: string; operands: QueryNode[] };

/** Parses PostgreSQL's text form of a tsquery (precedence: ! above <-> above & above |); undefined when empty. */
export function parseTsquery(text: string): QueryNode | undefined {
  const tokens = text.match(/'(?:[^']|'')*'(?::[*A-D]+)?|<\d*->|<\d+>|[&|!()]/g) ?? [];
  let at = 0;
  const or = (): QueryNode => {
    const operands = [and()];
    while (tokens[at] === '|') {
      at++;
      operands.push(and());
    }
    return operands.length === 1 ? operands[0] : { kind: 'or', operands };
  };
  const and = (): QueryNode => {
    const operands = [phrase()];
    while (tokens[at] === '&') {
      at++;
      operands.push(phrase());
    }
    return operands.length === 1 ? operands[0] : { kind: 'and', operands };
  };
  const phrase = (): QueryNode => {
    let node = unary();
    while (tokens[at]?.startsWith('<')) {
      const operator = tokens[at++];
      node = { kind: 'phrase', operator, operands: [node, unary()] };
    }
    return node;
  };
  const unary = (): QueryNode => {
    const token = tokens[at++];
    if (token === '!') return { kind: 'not', operand: unary() };
    if (token === '(') {
      const node = or();
      at++; // ')'
      return node;
    }
    if (!token?.startsWith("'")) throw new Error(`unexpected ${token ?? 'end'} in tsquery ${text}`);
    const [, word = '', suffix = ''] = /^'((?:[^']|'')*)'(.*)$/.exec(token)!;
    return { kind: 'lexeme', text: token, key: word.replace(/''/g, "'") + (suffix.includes('*') ? ':*' : '') };
  };
  return tokens.length > 0 ? or() : undefined;
}

export function tsqueryText(node: QueryNode): string {
  const wrap = (child: QueryNode) => (child.kind === 'lexeme' ? child.text : `( ${tsqueryText(child)} )`);
  switch (node.kind) {
    case 'lexeme':
      return node.text;
    case 'not':
      return `!${wrap(node.operand)}`;
    case 'and':
      return node.operands.map(wrap).join(' & ');
    case 'or':
      return node.operands.map(wrap).join(' | ');
    case 'phrase':
      return node.operands.map(wrap).join(` ${node.operator} `);
  }
}

/** The share of tenders holding each lexeme (tender_search_frequencies), from the planner's statistics. */
export interface Frequencies {
  default: number;
  lexemes: Record<string, number>;
}

/**
 * The GIN index scan, in units of one posting list entry it checks (about 0.13 µs at a million tenders): it walks the
 * entries of the rarest lexemes whose absence rules a tender out (its "required" entries, rarest first) and, for each,
 * advances the other lexemes' lists and evaluates the query, which costs more the more lexemes it holds
 * (ENTRY_COST each); testing a row it finds (reading a tender_search row of about 1 kB and matching the whole query)
 * costs ROW_COST.
 */
const ENTRY_COST = 1 / 12;
const ROW_COST = 25;

type Ternary = 'yes' | 'no' | 'maybe';

/**
 * The part of a search the GIN index should find, the rest being tested on the rows it finds. Every lexeme of a
 * thesaurus concept that is rarer than the query's rarest word becomes an entry the index scan walks («new» and
 * «construct» of «building works», each word of a concept of twenty), and a rare filter does too, while a common one
 * (`~currency:rub`, `@ru`) costs next to nothing once a rarer part drives the scan. So, from the planner's share of
 * each lexeme (`frequencies`, of `total` tenders), wanting `candidates` matches, the query's parts (its words'
 * concepts and the filters) go in rarest first while each lowers the estimated cost: the entries walked, plus the rows
 * tested until `candidates` of them match the parts left out. Negations stay out (an index cannot find what lacks a
 * word). `index` finds a superset of the matches; `exact` says it is the whole query (no test on the rows needed).
 */
export function indexQuery(
  parts: QueryNode[],
  frequencies: Frequencies,
  total: number,
  candidates: number,
): { index: string; exact: boolean } | undefined {
  const share = (node: QueryNode): number => {
    switch (node.kind) {
      case 'lexeme':
        return frequencies.lexemes[node.key] ?? frequencies.default;
      case 'not':
        return 1 - share(node.operand);
      case 'or':
        return Math.min(
          1,
          node.operands.reduce((sum, operand) => sum + share(operand), 0),
        );
      default:
        return node.operands.reduce((product, operand) => product * share(operand), 1);
    }
  };
  const lexemes = (node: QueryNode): Array<QueryNode & { kind: 'lexeme' }> =>
    node.kind === 'lexeme' ? [node] : node.kind === 'not' ? lexemes(node.operand) : node.operands.flatMap(lexemes);
  const value = (node: QueryNode, absent: Set<string>): Ternary => {
    switch (node.kind) {
      case 'lexeme':
        return absent.has(node.key) ? 'no' : 'maybe';
      case 'not': {
        const v = value(node.operand, absent);
        return v === 'yes' ? 'no' : v === 'no' ? 'yes' : 'maybe';
      }
      case 'or': {
        const values = node.operands.map((operand) => value(operand, absent));
        return values.includes('yes') ? 'yes' : values.every((v) => v === 'no') ? 'no' : 'maybe';
      }
      default: {
        const values = node.operands.map((operand) => value(operand, absent));
        return values.includes('no') ? 'no' : values.every((v) => v === 'yes') ? 'yes' : 'maybe';
      }
    }
  };
  // The entries the scan walks: the rarest lexemes, until their absence alone rules a tender out.
  const walked = (chosen: QueryNode[]): number => {
    const query: QueryNode = { kind: 'and', operands: chosen };
    const all = [...new Map(lexemes(query).map((lexeme) => [lexeme.key, share(lexeme)])).entries()].sort(
      (a, b) => a[1] - b[1],
    );
    const absent = new Set<string>();
    let entries = 0;
    for (const [key, lexemeShare] of all) {
      absent.add(key);
      entries += lexemeShare;
      if (value(query, absent) === 'no') break;
    }
    return entries * (1 + ENTRY_COST * all.length);
  };
  const indexable = (node: QueryNode): boolean =>
    node.kind === 'lexeme' ||
    (node.kind === 'or' ? node.operands.every(indexable) : node.kind !== 'not' && node.operands.some(indexable));
  const ranked = parts.filter(indexable).sort((a, b) => share(a) - share(b));
  if (ranked.length === 0) return undefined;
  const wanted = candidates / Math.max(total, 1);
  // Entries walked, plus rows tested: those the index finds, or fewer when `candidates` of them match the rest sooner.
  const cost = (chosen: QueryNode[]) => {
    const rows = chosen.reduce((product, part) => product * share(part), 1);
    const rest = ranked.filter((part) => !chosen.includes(part)).reduce((product, part) => product * share(part), 1);
    return walked(chosen) + ROW_COST * Math.min(rows, wanted / Math.max(rest, 1e-9));
  };
  const chosen = [ranked[0]];
  for (const part of ranked.slice(1)) if (cost([...chosen, part]) < cost(chosen)) chosen.push(part);
  const exact = chosen.length === parts.length;
  return {
    index: chosen.map((node) => (node.kind === 'lexeme' ? node.text : `( ${tsqueryText(node)} )`)).join(' & '),
    exact,
  };
}
