// Schema migrations (node-pg-migrate, plain SQL files in src/migrations), run as the database's owner. Safe to run
// from several processes at once: the runner holds an advisory lock and waits for it. After them the owner grants the
// application role what it needs (src/db-roles.ts).
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { PG_MIGRATE_LOCK_ID, runner } from 'node-pg-migrate';
import { ConfigError } from './config.ts';
import { grantAppRole, MIGRATIONS_TABLE, roleFacts, type RoleFacts } from './db-roles.ts';
import type { Logger } from './log.ts';

export const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

/**
 * Applies the migrations not applied yet, as the role of `databaseUrl` (the owner). With `appRole` (another role than
 * the owner), then grants that role its privileges, also when no migration was left to run.
 */
export async function migrate(
  databaseUrl: string,
  logger: Logger,
  options: { appRole?: string } = {},
): Promise<string[]> {
  const applied = await runner({
    databaseUrl,
    dir: MIGRATIONS_DIR,
    direction: 'up',
    migrationsTable: MIGRATIONS_TABLE,
    advisoryLockMode: 'wait',
    singleTransaction: true,
    logger: { debug: () => {}, info: () => {}, warn: (msg) => logger.warn(msg), error: (msg) => logger.error(msg) },
  });
  const names = applied.map((migration) => migration.name);
  if (names.length > 0) logger.info({ migrations: names }, 'database migrated');
  if (options.appRole) {
    const owner = new pg.Client({ connectionString: databaseUrl });
    await owner.connect();
    try {
      const self = (await owner.query<{ role: string }>('SELECT current_user AS role')).rows[0].role;
      if (self !== options.appRole) await grantAppRole(owner, options.appRole);
    } finally {
      await owner.end();
    }
  }
  return names;
}

/** The migrations in src/migrations, by name, in order. */
export function migrationNames(): string[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((file) => file.endsWith('.sql'))
    .map((file) => file.replace(/\.sql$/, ''))
    .sort();
}

/**
 * What a process does with its database at start. It connects as DATABASE_URL's role, which may not be a superuser
 * (a superuser can switch the audit log's append-only trigger off, truncate it, drop it): that is refused.
 * - With DATABASE_OWNER_URL, the migrations run as that role, which then grants DATABASE_URL's role its privileges.
 * - Without it, DATABASE_URL's role runs them when it owns the schema (one role for everything, as before there were
 *   two; the process warns that it runs as the owner); an application role only checks that none is missing, after
 *   waiting for a migration under way elsewhere (docker-compose.yml's migrate job), and refuses to start otherwise.
 */
export async function prepareDatabase(
  urls: { databaseUrl: string; ownerUrl?: string },
  logger: Logger,
): Promise<RoleFacts> {
  const client = new pg.Client({ connectionString: urls.databaseUrl });
  await client.connect();
  try {
    const facts = await roleFacts(client);
    if (facts.superuser) {
      throw new ConfigError(
        `DATABASE_URL connects to PostgreSQL as "${facts.role}", a superuser, and the service's processes may not: a superuser ` +
          "can switch the audit log's append-only trigger off, truncate it or drop it. Connect as a role that owns nothing " +
          '(README: PostgreSQL roles): set DATABASE_URL to it, and DATABASE_OWNER_URL to the owner that runs the migrations.',
      );
    }
    if (urls.ownerUrl) {
      await migrate(urls.ownerUrl, logger, { appRole: facts.role });
    } else if (await ownsMigrations(client)) {
      await migrate(urls.databaseUrl, logger).catch((error: Error) => {
        // A fresh database and an application role that may not create in it.
        if (!/permission denied|must be owner/.test(error.message)) throw error;
        throw new ConfigError(
          `DATABASE_URL's role "${facts.role}" may not run the migrations (${error.message.split('\n')[0]}). ` +
            "Set DATABASE_OWNER_URL to the database's owner (README: PostgreSQL roles).",
        );
      });
    } else {
      let missing = await missingMigrations(client);
      if (missing.length > 0) {
        // A migration run elsewhere holds the runner's lock until it is done: wait for it, then look again.
        await client.query('SELECT pg_advisory_lock($1)', [PG_MIGRATE_LOCK_ID]);
        await client.query('SELECT pg_advisory_unlock($1)', [PG_MIGRATE_LOCK_ID]);
        missing = await missingMigrations(client);
      }
      if (missing.length > 0) {
        throw new ConfigError(
          `The database lacks ${missing.length} migration(s) (${missing.join(', ')}), and DATABASE_URL's role "${facts.role}" may not ` +
            'run them. Run them as the owner first (DATABASE_OWNER_URL=… npm run migrate), or set DATABASE_OWNER_URL for this process.',
        );
      }
    }
    const after = await roleFacts(client);
    if (after.owned > 0 || after.createRole || after.createDb) {
      logger.warn(
        { role: after.role, owned: after.owned, createRole: after.createRole, createDb: after.createDb },
        `DATABASE_URL's role "${after.role}" owns tables or may create roles or databases: it could drop the audit log's ` +
          'append-only trigger. Give the processes a role that owns nothing (README: PostgreSQL roles) and the migrations DATABASE_OWNER_URL.',
      );
    }
    return after;
  } finally {
    await client.end();
  }
}

/** True when the migrations' table is this role's (or not there yet: then this role is to make it). */
async function ownsMigrations(client: pg.Client): Promise<boolean> {
  const result = await client.query<{ mine: boolean | null }>(
    `SELECT (SELECT pg_has_role(current_user, c.relowner, 'USAGE') FROM pg_class c WHERE c.oid = to_regclass($1)) AS mine`,
    [`public.${MIGRATIONS_TABLE}`],
  );
  return result.rows[0].mine !== false;
}

async function missingMigrations(client: pg.Client): Promise<string[]> {
  const applied = await client.query<{ name: string }>(`SELECT name FROM ${pg.escapeIdentifier(MIGRATIONS_TABLE)}`);
  const done = new Set(applied.rows.map((row) => row.name));
  return migrationNames().filter((name) => !done.has(name));
}
