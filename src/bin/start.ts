// `npm start`: the whole service on one machine. Embedded PostgreSQL and the Temporal dev server (unless
// DATABASE_URL / TEMPORAL_ADDRESS point elsewhere), migrations, demo credentials, the worker and both servers.
// Ctrl-C stops them in order: servers stop accepting, the worker drains, then Temporal and PostgreSQL stop.
// No process is left behind: a stop that runs out of time still stops PostgreSQL and Temporal, and a start that finds
// them still running on the same DATA_DIR (the previous start was killed) stops them before it starts its own.
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pretty from 'pino-pretty';
import { ConfigError, parseConfig, type Config } from '../config.ts';
import { createLogger } from '../log.ts';
import { prepareDatabase } from '../migrate.ts';
import { createServices } from '../services.ts';
import { startWorker } from '../worker.ts';
import { listen } from '../http/server.ts';
import { createMainApp } from '../main-app.ts';
import { createDataApp } from '../data-app.ts';
import { startEmbeddedPostgres } from '../dev/embedded-postgres.ts';
import { resolveTemporalCli } from '../dev/temporal-cli.ts';
import { startTemporalDevServer } from '../dev/temporal-dev-server.ts';
import { PidFile, stopPostmaster } from '../dev/processes.ts';
import { ensureDemoCredentials, type DemoCredentials } from '../dev/demo.ts';
import { ensureSampleData } from '../dev/sample-data-load.ts';
import { configureDataSources } from '../data-api/sync.ts';
import { progressStep } from '../dev/progress.ts';

if (process.env.SVC_SUPERVISED === '1') {
  await runAll();
} else {
  supervise();
}

/**
 * Ctrl-C signals the terminal's whole process group, so PostgreSQL and the dev server would stop at once, under a
 * worker that is still draining. The service therefore runs in a process group of its own; we pass signals on.
 */
function supervise(): void {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], {
    detached: true,
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, SVC_SUPERVISED: '1' },
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => child.kill('SIGTERM'));
  }
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

async function runAll(): Promise<void> {
  const started = Date.now();
  let config: Config;
  try {
    // A developer's own machine: webhooks may reach a receiver on it unless WEBHOOK_ALLOW_LOOPBACK=false says otherwise.
    config = parseConfig({ WEBHOOK_ALLOW_LOOPBACK: 'true', ...process.env });
  } catch (error) {
    console.error((error as ConfigError).message);
    process.exit(1);
  }
  const logger = createLogger(
    config.LOG_LEVEL,
    process.stdout.isTTY ? pretty({ colorize: true, sync: true }) : undefined,
  );
  const say = (message: string) => process.stdout.write(`${message}\n`);
  const stops: Array<{ name: string; stop: () => Promise<void> }> = [];
  const postgresDir = path.join(config.DATA_DIR, 'postgres');
  const temporalDb = path.join(config.DATA_DIR, 'temporal.sqlite');
  const temporalPid = new PidFile(path.join(config.DATA_DIR, 'temporal.pid'), temporalDb);
  // The servers of a DATA_DIR are stale only when the start that ran them is gone; a running one keeps them.
  const owner = new PidFile(path.join(config.DATA_DIR, 'start.pid'), 'src/bin/start.ts');
  // Ours on this DATA_DIR only: the pid files say which processes those are.
  const stopServersOfDataDir = async () => {
    const [postgres, temporal] = await Promise.all([
      config.embeddedPostgres ? stopPostmaster(postgresDir) : undefined,
      config.embeddedTemporal ? temporalPid.stop() : undefined,
    ]);
    return { postgres, temporal };
  };

  let stopping = false;
  const shutdown = async (reason: string, exitCode: number) => {
    if (stopping) return;
    stopping = true;
    say(`\nStopping (${reason})…`);
    let stoppingNow = '';
    setTimeout(() => {
      say(
        `Did not stop within ${config.SHUTDOWN_LIMIT_SECONDS} s (the ${stoppingNow} was still stopping); stopping PostgreSQL and Temporal, then exiting anyway.`,
      );
      // Exiting alone would orphan them, holding their ports and DATA_DIR against the next start.
      void stopServersOfDataDir().finally(() => process.exit(1));
    }, config.SHUTDOWN_LIMIT_SECONDS * 1000).unref();
    for (const { name, stop } of stops.reverse()) {
      stoppingNow = name;
      await stop().catch((error: Error) => say(`  ${name}: ${error.message}`));
      say(`  ✓ ${name} stopped`);
    }
    if (owner.running() === process.pid) owner.remove();
    say('Stopped.');
    process.exit(exitCode);
  };
  process.on('SIGINT', () => void shutdown('SIGINT', 0));
  process.on('SIGTERM', () => void shutdown('SIGTERM', 0));
  process.on('SIGHUP', () => void shutdown('SIGHUP', 0));
  // The supervising parent is gone (killed hard): do not outlive it.
  process.on('disconnect', () => void shutdown('parent exited', 0));

  const step = progressStep(say);

  try {
    mkdirSync(config.DATA_DIR, { recursive: true });
    const other = owner.running();
    if (other !== undefined && other !== process.pid) {
      throw new ConfigError(
        `Another npm start (pid ${other}) runs on ${config.DATA_DIR}. Stop it first, or set DATA_DIR to another folder.`,
      );
    }
    owner.write(process.pid);
    const stale = await stopServersOfDataDir();
    if (stale.postgres)
      say(`  ✓ stopped the PostgreSQL a previous start left running on this DATA_DIR (pid ${stale.postgres})`);
    if (stale.temporal)
      say(`  ✓ stopped the Temporal dev server a previous start left running on this DATA_DIR (pid ${stale.temporal})`);
    // The processes connect as the application role; the migrations run as the owner (src/db-roles.ts).
    const [database] = await Promise.all([
      config.embeddedPostgres
        ? step(
            `PostgreSQL (embedded, data in ${path.relative(process.cwd(), config.DATA_DIR) || '.'}/postgres)`,
            async () => {
              const postgres = await startEmbeddedPostgres({ dataDir: config.DATA_DIR, port: config.POSTGRES_PORT });
              stops.push({ name: 'PostgreSQL', stop: postgres.stop });
              return { databaseUrl: postgres.url, ownerUrl: postgres.ownerUrl };
            },
          )
        : Promise.resolve({ databaseUrl: config.DATABASE_URL!, ownerUrl: config.DATABASE_OWNER_URL }),
      config.embeddedTemporal
        ? step('Temporal dev server', async () => {
            const cli = await resolveTemporalCli({ explicit: config.TEMPORAL_CLI, say });
            const server = await startTemporalDevServer({
              cli,
              dbFile: temporalDb,
              pidFile: temporalPid,
              host: config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST,
              port: config.TEMPORAL_PORT,
              uiPort: config.TEMPORAL_UI_PORT,
              namespace: config.TEMPORAL_NAMESPACE,
            });
            stops.push({ name: 'Temporal dev server', stop: server.stop });
          })
        : Promise.resolve(),
    ]);
    // The owner's URL stays here: the services get the application role's alone.
    const runtime: Config = {
      ...config,
      DATABASE_URL: database.databaseUrl,
      DATABASE_OWNER_URL: undefined,
      DATABASE_ADMIN_URL: undefined,
    };
    await step('Database migrations', () => prepareDatabase(database, logger));
    const services = createServices(runtime, logger);
    stops.push({ name: 'connections', stop: services.close });
    const demo = await ensureDemoCredentials(services.db, config.DATA_DIR);
    if (config.SAMPLE_DATA === 'true') await ensureSampleData(services.db, say);
    const worker = await step('Temporal worker (bundling workflows)', () => startWorker(services));
    stops.push({ name: 'worker', stop: worker.stop });
    await configureDataSources(services);
    const main = await listen(createMainApp(services), config.HOST, config.PORT);
    stops.push({ name: 'main server', stop: main.stop });
    const data = await listen(createDataApp(services), config.HOST, config.DATA_PORT);
    stops.push({ name: 'data server', stop: data.stop });
    say(summary(runtime, demo, (Date.now() - started) / 1000));
  } catch (error) {
    say(`\n✗ ${(error as Error).message}`);
    if (!(error instanceof ConfigError) && !(error as Error).message.includes('\n'))
      logger.error({ err: error }, 'start failed');
    await shutdown('start failed', 1);
  }
}

function summary(config: Config, demo: DemoCredentials, seconds: number): string {
  const temporal = config.embeddedTemporal
    ? `http://${config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST}:${config.TEMPORAL_UI_PORT}`
    : `${config.TEMPORAL_ADDRESS} (external, namespace ${config.TEMPORAL_NAMESPACE})`;
  const rows: Array<[string, string]> = [
    ['API', `${config.BASE_URL}/api`],
    ['API docs', `${config.BASE_URL}/docs  (OpenAPI: ${config.BASE_URL}/api/openapi.json)`],
    ['Data API', `${config.MCP_URL}/v1`],
    ['Data API docs', `${config.MCP_URL}/docs  (OpenAPI: ${config.MCP_URL}/v1/openapi.json)`],
    ['MCP endpoint', `${config.MCP_URL}/mcp/`],
    ['Temporal UI', temporal],
    ['Buyer cabinet', `${config.BASE_URL}/cabinet  (outbox with invitations: ${config.BASE_URL}/admin/mail)`],
    ['Widget demo', `${config.BASE_URL}/widget/demo  (a storefront with the widget of the demo marketplace)`],
    ['Health', `${config.BASE_URL}/healthz  ${config.MCP_URL}/healthz`],
    [
      'Webhooks',
      config.WEBHOOK_ALLOW_LOOPBACK
        ? 'may reach this machine (WEBHOOK_ALLOW_LOOPBACK=true: loopback receivers such as http://127.0.0.1:4000/hooks)'
        : 'public addresses only (WEBHOOK_ALLOW_LOOPBACK=false)',
    ],
  ];
  const credentials: Array<[string, string]> = [
    ['Admin token', demo.admin_token],
    ['Marketplace', `${demo.marketplace.name} (${demo.marketplace.mode}), id ${demo.marketplace.id}`],
    ['  secret key', demo.marketplace.secret_key],
    ['  public key', demo.marketplace.public_key],
    ['Data key (free)', `${demo.data_key.key}  (account ${demo.data_key.email})`],
  ];
  const table = (items: Array<[string, string]>) => items.map(([k, v]) => `  ${k.padEnd(16)} ${v}`).join('\n');
  return [
    '',
    `svc is running (started in ${seconds.toFixed(1)} s).`,
    '',
    table(rows),
    '',
    `Demo credentials (made once, kept in ${path.join(path.relative(process.cwd(), config.DATA_DIR) || '.', 'demo-credentials.json')}):`,
    table(credentials),
    '',
    'Try:',
    `  curl -H 'X-Svc-Key: ${demo.marketplace.secret_key}' ${config.BASE_URL}/api/mkt/ping`,
    `  curl -H 'Authorization: Bearer ${demo.data_key.key}' '${config.MCP_URL}/v1/tenders?q=${encodeURIComponent('поставка')}&limit=3'`,
    '',
    'Press Ctrl-C to stop.',
    '',
  ].join('\n');
}
