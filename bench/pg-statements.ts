// What the service asks of PostgreSQL per unit of work, from pg_stat_statements (loaded by the embedded PostgreSQL of
// `npm start`; elsewhere add it to shared_preload_libraries): statements, commits and the statements behind them.
// Needs a superuser (to reset the counters): DATA_DIR's embedded one, or BENCH_DATABASE_SUPERUSER_URL.
import pg from 'pg';
import { embeddedUrls } from '../src/dev/embedded-postgres.ts';

export interface StatementCounter {
  /** Zeroes the counters (the statements of this database, its commits). */
  reset(): Promise<void>;
  /** Prints statements and commits per unit, and the most frequent statements. */
  report(units: number, label: string, top?: number): Promise<{ statements: number; commits: number }>;
  close(): Promise<void>;
}

export async function statementCounter(dataDir: string, port: number): Promise<StatementCounter | undefined> {
  let url = process.env.BENCH_DATABASE_SUPERUSER_URL;
  try {
    url ??= embeddedUrls(dataDir, port).superuserUrl;
  } catch {
    return undefined;
  }
  const client = new pg.Client(url);
  try {
    await client.connect();
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await client.query('SELECT count(*) FROM pg_stat_statements');
  } catch (error) {
    console.log(`  (no statement counts: ${(error as Error).message})`);
    await client.end().catch(() => {});
    return undefined;
  }
  const ours = `dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`;
  return {
    async reset() {
      await client.query('SELECT pg_stat_statements_reset()');
      await client.query('SELECT pg_stat_reset()');
    },
    async report(units, label, top = 12) {
      const rows = (
        await client.query<{ calls: string; ms: string; query: string }>(
          `SELECT calls, total_exec_time AS ms, regexp_replace(query, '\\s+', ' ', 'g') AS query FROM pg_stat_statements WHERE ${ours} ORDER BY calls DESC`,
        )
      ).rows;
      // The counter's own statements (the reset, this report) are not the service's.
      const service = rows.filter((row) => !/pg_stat_|pg_database/.test(row.query));
      const statements = service.reduce((sum, row) => sum + Number(row.calls), 0);
      const execMs = service.reduce((sum, row) => sum + Number(row.ms), 0);
      const commits = Number(
        (await client.query(`SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`)).rows[0]
          .xact_commit,
      );
      console.log(
        `  PostgreSQL per ${label}: ${(statements / units).toFixed(1)} statements (${(execMs / units).toFixed(2)} ms executing), ${(commits / units).toFixed(1)} commits`,
      );
      // Each statement's calls and executing time per unit, so a statement that grows slow with the tables shows.
      for (const row of service.slice(0, top)) {
        const each = `${(Number(row.calls) / units).toFixed(2).padStart(6)} × ${(Number(row.ms) / units).toFixed(2).padStart(5)} ms`;
        console.log(`    ${each}  ${row.query.slice(0, 110)}`);
      }
      return { statements: statements / units, commits: commits / units };
    },
    close: () => client.end(),
  };
}
