// `npm run migrate`: the database's schema job (docker-compose.yml's migrate service; a deployment's release step).
//   DATABASE_ADMIN_URL  optional: a superuser (or a role with CREATEROLE and CREATEDB). The owner and the application
//                       role of the two URLs below are made (or their passwords set again) and the database of
//                       DATABASE_OWNER_URL is made and given to the owner; what was there before is handed over.
//   DATABASE_OWNER_URL  the owner: the migrations run as it, then it grants DATABASE_URL's role its privileges.
//   DATABASE_URL        the application role the processes connect as.
// Without DATABASE_OWNER_URL, the migrations run as DATABASE_URL's role when it owns the schema (one role for
// everything). A superuser DATABASE_URL is refused, as the processes refuse it.
import { ConfigError, parseConfig } from '../config.ts';
import { databaseOf, ensureRoles, loginOf } from '../db-roles.ts';
import { createLogger } from '../log.ts';
import { prepareDatabase } from '../migrate.ts';

const logger = createLogger(process.env.LOG_LEVEL === 'silent' ? 'silent' : 'info').child({ process: 'migrate' });
try {
  const config = parseConfig();
  if (!config.DATABASE_URL) throw new ConfigError('DATABASE_URL is required: the role the processes connect as.');
  if (config.DATABASE_ADMIN_URL) {
    if (!config.DATABASE_OWNER_URL)
      throw new ConfigError(
        'DATABASE_ADMIN_URL makes two roles: set DATABASE_OWNER_URL (the owner) beside DATABASE_URL.',
      );
    if (databaseOf(config.DATABASE_OWNER_URL) !== databaseOf(config.DATABASE_URL)) {
      throw new ConfigError('DATABASE_OWNER_URL and DATABASE_URL must name the same database.');
    }
    const owner = loginOf(config.DATABASE_OWNER_URL, 'DATABASE_OWNER_URL');
    const app = loginOf(config.DATABASE_URL, 'DATABASE_URL');
    await ensureRoles(config.DATABASE_ADMIN_URL, databaseOf(config.DATABASE_OWNER_URL), owner, app);
    logger.info({ owner: owner.name, app: app.name }, 'roles ready');
  }
  // What every process does at start, once: DATABASE_URL's role is checked (no superuser), the migrations run as the
  // owner, and the owner grants that role its privileges.
  const facts = await prepareDatabase(
    { databaseUrl: config.DATABASE_URL, ownerUrl: config.DATABASE_OWNER_URL },
    logger,
  );
  logger.info({ role: facts.role }, 'database ready');
  process.exit(0);
} catch (error) {
  if (error instanceof ConfigError) console.error(error.message);
  else logger.fatal({ err: error }, 'migration failed');
  process.exit(1);
}
