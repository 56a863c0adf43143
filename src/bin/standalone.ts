// Running one process alone (docker-compose, production): configuration from the environment only, migrations at
// start, and a clean stop on SIGINT/SIGTERM.
import { ConfigError, parseConfig } from '../config.ts';
import { createLogger } from '../log.ts';
import { migrate } from '../migrate.ts';
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
    await migrate(config.DATABASE_URL, logger);
    const services = createServices(config, logger);
    const running = await start(services);
    const stop = async (signal: string) => {
      logger.info({ signal }, 'stopping');
      await running.stop();
      await services.close();
      logger.info('stopped');
      process.exit(0);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  } catch (error) {
    logger.fatal({ err: error }, `${name} failed to start`);
    process.exit(1);
  }
}
