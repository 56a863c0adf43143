// One embedded PostgreSQL and one Temporal dev server on free ports for the whole run; tests isolate by unique ids.
// Tests connect as the application role `svc_app`, as the service does (databaseUrl); the few that set up what the
// service may not do (a trigger of their own, say) use the owner's connection (databaseOwnerUrl, test/helpers.ts).
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../src/dev/embedded-postgres.ts';
import { resolveTemporalCli } from '../src/dev/temporal-cli.ts';
import { startTemporalDevServer } from '../src/dev/temporal-dev-server.ts';
import { freePort } from '../src/dev/ports.ts';
import { prepareDatabase } from '../src/migrate.ts';
import { createLogger } from '../src/log.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    databaseOwnerUrl: string;
    temporalAddress: string;
    temporalCli: string;
    dataDir: string;
  }
}

export default async function setup(project: TestProject) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-test-'));
  chmodSync(dir, 0o755); // as root, PostgreSQL runs as the postgres user and must reach its folder
  // Whatever started is stopped again, also when a later step fails: no PostgreSQL outlives a failed run.
  const stops: Array<() => Promise<void>> = [async () => rmSync(dir, { recursive: true, force: true })];
  const teardown = async () => {
    for (const stop of stops.reverse()) await stop();
  };
  try {
    const [postgres, temporalCli] = await Promise.all([
      startEmbeddedPostgres({ dataDir: dir, port: await freePort() }).then((started) => {
        stops.push(() => started.stop());
        return started;
      }),
      resolveTemporalCli({ explicit: process.env.TEMPORAL_CLI || undefined, say: (message) => console.log(message) }),
    ]);
    const temporal = await startTemporal(temporalCli);
    stops.push(() => temporal.stop());
    await prepareDatabase({ databaseUrl: postgres.url, ownerUrl: postgres.ownerUrl }, createLogger('silent'));
    project.provide('databaseUrl', postgres.url);
    project.provide('databaseOwnerUrl', postgres.ownerUrl);
    project.provide('temporalAddress', temporal.address);
    project.provide('temporalCli', temporalCli);
    project.provide('dataDir', dir);
  } catch (error) {
    await teardown();
    throw error;
  }
  return teardown;
}

/**
 * The dev server picks more ports than the two we give it (its services' internal ones), and another process can take
 * a port between our check and its bind; once in a long while it then exits at start. A second try on new ports
 * keeps such a clash from failing the whole run; a real fault fails twice and says why.
 */
async function startTemporal(cli: string) {
  const start = async () =>
    startTemporalDevServer({
      cli,
      host: '127.0.0.1',
      port: await freePort(),
      uiPort: await freePort(),
      namespace: 'default',
    });
  try {
    return await start();
  } catch (error) {
    console.warn(`${(error as Error).message}\nTrying once more on other ports.`);
    return start();
  }
}
