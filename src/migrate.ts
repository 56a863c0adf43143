// Schema migrations (node-pg-migrate, plain SQL files in src/migrations). Safe to run from several processes at
// once: the runner holds an advisory lock and waits for it.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runner } from 'node-pg-migrate';
import type { Logger } from './log.ts';

export const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

export async function migrate(databaseUrl: string, logger: Logger): Promise<string[]> {
  const applied = await runner({
    databaseUrl,
    dir: MIGRATIONS_DIR,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    advisoryLockMode: 'wait',
    singleTransaction: true,
    logger: { debug: () => {}, info: () => {}, warn: (msg) => logger.warn(msg), error: (msg) => logger.error(msg) },
  });
  const names = applied.map((migration) => migration.name);
  if (names.length > 0) logger.info({ migrations: names }, 'database migrated');
  return names;
}
