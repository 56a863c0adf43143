// The pool survives PostgreSQL ending connections under it (a restart, an administrator's terminate): the process stays
// up, the caller gets an error, and the next query works on a fresh connection.
import { afterAll, describe, expect, inject, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createDb } from '../../src/db.ts';

const db = createDb(inject('databaseUrl'), 2);
afterAll(() => db.end());

describe('the database pool', () => {
  it('keeps the process up when a checked-out connection is ended between two queries', async () => {
    const client = await db.connect();
    const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    // Its end, not its error: a listener of ours for the error would hide what is tested, the pool's own.
    const ended = new Promise((resolve) => client.once('end', resolve));
    const admin = createDb(inject('databaseUrl'), 1);
    try {
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    } finally {
      await admin.end();
    }
    // The connection reported its end (an error event) on the client with no query running: without the pool's
    // listener that event crashed the process, and this test with it.
    await ended;
    await expect(client.query('SELECT 1')).rejects.toThrow();
    client.release();
    expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });
});

describe('statements run often', () => {
  /** The statements prepared on the connection that runs this, by their text. */
  const preparedOn = async (client: { query: (text: string) => Promise<{ rows: { statement: string }[] }> }) =>
    (await client.query('SELECT statement FROM pg_prepared_statements')).rows.map((row) => row.statement);

  it('are prepared on a connection from their second run, answer as before, and one run once is not', async () => {
    const pool = createDb(inject('databaseUrl'), 1);
    try {
      const text = `SELECT $1::int + 1 AS next, '${randomUUID()}' AS tag`;
      const once = `SELECT $1::int * 2 AS twice, '${randomUUID()}' AS tag`;
      expect((await pool.query(once, [21])).rows[0].twice).toBe(42);
      const answers = [];
      for (const value of [1, 2, 3]) answers.push((await pool.query(text, [value])).rows[0].next);
      expect(answers).toEqual([2, 3, 4]);
      const prepared = await preparedOn(pool);
      expect(prepared).toContain(text);
      expect(prepared).not.toContain(once);
    } finally {
      await pool.end();
    }
  });

  it('are prepared on a connection up to a bound, past it they run unnamed', async () => {
    const pool = createDb(inject('databaseUrl'), 1);
    try {
      const tag = randomUUID();
      for (let i = 0; i < 300; i++) {
        const text = `SELECT $1::int + ${i} AS n, '${tag}' AS tag`;
        await pool.query(text, [1]);
        expect((await pool.query(text, [1])).rows[0].n).toBe(1 + i);
      }
      const ours = (await preparedOn(pool)).filter((statement) => statement.includes(tag));
      expect(ours).toHaveLength(256);
    } finally {
      await pool.end();
    }
  });

  it('are prepared again when a change of their table changed their result: outside a transaction at once, inside by the retry', async () => {
    // The owner: the application's role may not make tables, temporary ones included.
    const pool = createDb(inject('databaseOwnerUrl'), 1);
    try {
      // A temporary table: the one connection's own, so the columns can change under its prepared statement.
      await pool.query('CREATE TEMP TABLE shapes (id int)');
      await pool.query('INSERT INTO shapes VALUES (1)');
      const text = 'SELECT * FROM shapes WHERE id = $1';
      for (let i = 0; i < 2; i++) expect((await pool.query(text, [1])).rows).toEqual([{ id: 1 }]);
      expect(await preparedOn(pool)).toContain(text);

      await pool.query("ALTER TABLE shapes ADD COLUMN label text DEFAULT 'one'");
      expect((await pool.query(text, [1])).rows).toEqual([{ id: 1, label: 'one' }]);

      await pool.query('ALTER TABLE shapes ADD COLUMN size int DEFAULT 2');
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await expect(client.query(text, [1])).rejects.toThrow(/cached plan must not change result type/);
        await client.query('ROLLBACK');
        await client.query('BEGIN');
        expect((await client.query(text, [1])).rows).toEqual([{ id: 1, label: 'one', size: 2 }]);
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    } finally {
      await pool.end();
    }
  });

  it('run again, prepared anew, on the connection that replaces one PostgreSQL ended', async () => {
    const pool = createDb(inject('databaseUrl'), 1);
    const admin = createDb(inject('databaseUrl'), 1, { prepare: false });
    try {
      const text = `SELECT $1::int AS value, pg_backend_pid() AS pid, '${randomUUID()}' AS tag`;
      await pool.query(text, [1]);
      const { pid } = (await pool.query(text, [2])).rows[0];
      expect(await preparedOn(pool)).toContain(text);
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      // The pool learns of the end on its next use: that one fails, the one after runs on a new connection.
      await pool.query(text, [3]).catch(() => undefined);
      const again = (await pool.query(text, [4])).rows[0];
      expect(again.value).toBe(4);
      expect(again.pid).not.toBe(pid);
      expect(await preparedOn(pool)).toContain(text);
    } finally {
      await pool.end();
      await admin.end();
    }
  });

  it('are never prepared where DATABASE_PREPARED_STATEMENTS is false (a pooler that keeps none)', async () => {
    const pool = createDb(inject('databaseUrl'), 1, { prepare: false });
    try {
      const text = `SELECT $1::int AS same, '${randomUUID()}' AS tag`;
      for (let i = 0; i < 3; i++) await pool.query(text, [i]);
      expect(await preparedOn(pool)).not.toContain(text);
    } finally {
      await pool.end();
    }
  });
});
