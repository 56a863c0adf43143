// The pool survives PostgreSQL ending connections under it (a restart, an administrator's terminate): the process stays
// up, the caller gets an error, and the next query works on a fresh connection.
import { afterAll, describe, expect, inject, it } from 'vitest';
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
