// PostgreSQL access: one pool per process; queries are parameterised, transactions via `inTransaction`.
import { createHash } from 'node:crypto';
import pg from 'pg';

export type Db = pg.Pool;
export type DbClient = pg.PoolClient | pg.Pool;

// Return bigint columns (counts) as numbers: our counts stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (value) => Number(value));

/**
 * A statement seen this often in the process is prepared on each connection that runs it: PostgreSQL then parses it
 * once per connection and, for most of ours, plans it once (its generic plan), instead of both on every run. Planning
 * was more than half of the time PostgreSQL spent on a deal's statements (pg_stat_statements with track_planning).
 * Statements built anew for each request (a search's filters) are seen once and stay unnamed.
 */
const PREPARE_AFTER_RUNS = 2;
/** Named statements one connection keeps at most (each holds its plan in the server's memory for the connection's life). */
const PREPARED_PER_CONNECTION = 256;
/** Statement texts counted at most; the count starts over past it, so texts made per request cannot fill memory. */
const COUNTED_TEXTS = 4096;

const runs = new Map<string, number>();
const names = new Map<string, string>();

/** The prepared statement's name for a text run often enough, or undefined while it runs unnamed. */
function preparedName(text: string): string | undefined {
  const known = names.get(text);
  if (known) return known;
  const count = (runs.get(text) ?? 0) + 1;
  if (count < PREPARE_AFTER_RUNS) {
    if (runs.size >= COUNTED_TEXTS) runs.clear();
    runs.set(text, count);
    return undefined;
  }
  runs.delete(text);
  // A name per text: pg refuses one name for two texts on a connection, and a hash cannot make that happen by chance.
  const name = `s_${createHash('sha256').update(text).digest('base64url').slice(0, 24)}`;
  if (names.size < COUNTED_TEXTS) names.set(text, name);
  return name;
}

/**
 * A prepared statement whose result's columns changed under it (a migration altered a table it reads with `*`, or a
 * column's type): PostgreSQL refuses to run it again on that connection.
 */
const isStalePlan = (error: unknown) =>
  (error as { code?: string }).code === '0A000' && /cached plan must not change result type/.test(String(error));

/** pg's client, naming the statements run often (`query(text, values)`, the form all of ours take). */
class PreparingClient extends pg.Client {
  private prepared = 0;
  /** Texts whose statement went stale on this connection, and how often: each is prepared again under a new name. */
  private readonly stale = new Map<string, number>();

  // pg's overloads, passed on as they came: only a text with values is named.
  override query(...args: any[]): any {
    const [text, values, callback] = args;
    const plain = () => (super.query as (...args: any[]) => any)(...args);
    if (typeof text !== 'string' || !Array.isArray(values) || this.prepared >= PREPARED_PER_CONNECTION) return plain();
    const base = preparedName(text);
    if (!base) return plain();
    const times = this.stale.get(text);
    const name = times ? `${base}_${times}` : base;
    const parsed = (this as unknown as { connection: { parsedStatements: Record<string, string> } }).connection
      .parsedStatements;
    if (parsed[name] === undefined) this.prepared++;
    const result: Promise<pg.QueryResult> = (super.query as (...args: any[]) => any)({ name, text, values }).catch(
      (error: unknown) => {
        if (!isStalePlan(error)) throw error;
        this.stale.set(text, (times ?? 0) + 1);
        // Outside a transaction nothing was done: run it again, prepared anew. Inside one, the transaction failed, and
        // whoever retries it gets the new statement.
        if (this.getTransactionStatus() === 'I') return this.query(text, values);
        throw error;
      },
    );
    if (typeof callback !== 'function') return result;
    result.then(
      (answer) => callback(null, answer),
      (error: unknown) => callback(error),
    );
    return undefined;
  }
}

export function createDb(databaseUrl: string, max = 10, options: { prepare?: boolean } = {}): Db {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max,
    connectionTimeoutMillis: 5_000,
    ...(options.prepare === false ? {} : { Client: PreparingClient }),
  });
  // A client losing its connection (a database restart) must not crash the process. Idle, the pool reports it and
  // replaces it; checked out between two queries (inside a transaction), it reports it on itself, and the next query
  // on it fails instead, so the caller gets an error and the pool drops the client when it comes back.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

export async function inTransaction<T>(db: Db, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await db.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** PostgreSQL's unique_violation, for the rare places that turn a conflict into a 409. */
export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === '23505';
}
