// Running one process alone (docker-compose, production): configuration from the environment only, migrations at
// start (as DATABASE_OWNER_URL's role when set; src/migrate.ts prepareDatabase), and a clean stop on SIGINT/SIGTERM.
// It connects as DATABASE_URL's role, which may not be a superuser.
import { ConfigError, parseConfig } from '../config.ts';
import { createLogger } from '../log.ts';
import { prepareDatabase } from '../migrate.ts';
import { createServices, type Services } from '../services.ts';

export async function runStandalone(name: string, start: (services: Services) => Promise<{ stop(): Promise<void> }>) {
  let config;
  try {
    config = parseConfig();
    if (!config.DATABASE_URL) throw new ConfigError(`DATABASE_URL is required to run the ${name} alone.`);
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
  const logger = createLogger(config.LOG_LEVEL).child({ process: name });
  try {
    await prepareDatabase({ databaseUrl: config.DATABASE_URL, ownerUrl: config.DATABASE_OWNER_URL }, logger);
    // The owner's URL goes no further than the migrations.
    const services = createServices(
      { ...config, DATABASE_OWNER_URL: undefined, DATABASE_ADMIN_URL: undefined },
      logger,
    );
    const running = await start(services);
    const limitSeconds = config.SHUTDOWN_LIMIT_SECONDS;
    const stop = async (signal: string) => {
      logger.info({ signal }, 'stopping');
      // A stop that hangs (a drain waiting on a PostgreSQL that is gone) must not leave the process behind.
      setTimeout(() => {
        logger.error(`did not stop within ${limitSeconds} s; exiting anyway`);
        process.exit(1);
      }, limitSeconds * 1000).unref();
      await running.stop();
      await services.close();
      logger.info('stopped');
      process.exit(0);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    // Started by `npm run start:cluster` (with an IPC channel): when it is gone, killed however, do not outlive it.
    if (process.send) process.once('disconnect', () => void stop('parent exited'));
  } catch (error) {
    logger.fatal({ err: error }, `${name} failed to start`);
    process.exit(1);
  }
}
