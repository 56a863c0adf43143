// The production topology on one machine, for `npm run start:cluster` and the faults suite: PostgreSQL (the embedded
// binaries as a plain server), a real Temporal server on it with its Web UI, and our processes as production runs
// them, each its own `npm run start:api|start:worker|start:data` process: several main servers behind a round-robin
// proxy, several workers, one data server. Each part can be stopped, killed and started again on its own, which is
// what the faults suite does to it.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDb } from '../db.ts';
import { prepareDatabase } from '../migrate.ts';
import { withDatabase } from '../db-roles.ts';
import { createLogger } from '../log.ts';
import { startEmbeddedPostgres, type RunningPostgres } from './embedded-postgres.ts';
import {
  resolveTemporalServer,
  setUpTemporalSchemas,
  startTemporalServer,
  TEMPORAL_SERVER_VERSION,
  type RunningTemporalServer,
  type TemporalDatabase,
} from './temporal-server.ts';
import {
  resolveTemporalUiServer,
  startTemporalUiServer,
  TEMPORAL_UI_SERVER_VERSION,
  UI_CONFIG_DIR,
  type RunningTemporalUiServer,
} from './temporal-ui-server.ts';
import { ensureDemoCredentials, type DemoCredentials } from './demo.ts';
import { startProxy, type RunningProxy } from './proxy.ts';
import { PidFile, stopPostmaster } from './processes.ts';
import { assertPortFree } from './ports.ts';
import { progressStep } from './progress.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface ClusterOptions {
  dataDir: string;
  host: string;
  /** The proxy in front of the main servers: the service's `{base_url}`. */
  port: number;
  /** The data server: `{mcp_url}`. */
  dataPort: number;
  /** The main servers' own ports (default: the ports after `port`). */
  apiPorts?: number[];
  postgresPort: number;
  /** The Temporal frontend; the server also takes the 8 ports after it. */
  temporalPort: number;
  /**
   * The Temporal Web UI, which the console's "Open in Temporal" links open (TEMPORAL_UI_URL of the main servers). None
   * without it: the faults suite's scenarios that never open it skip its build and its process.
   */
  temporalUiPort?: number;
  namespace: string;
  workers: number;
  /** More environment for our processes (WEBHOOK_RETRY_BASE_SECONDS in the faults suite, say). */
  env?: Record<string, string>;
  say: (message: string) => void;
}

/** One of our processes: `src/bin/<entry>.ts`, its output in DATA_DIR/logs/<name>.log. */
export class ServiceProcess {
  private child?: ChildProcess;
  private exited?: Promise<void>;
  private log?: WriteStream;
  private readonly pidFile: PidFile;

  constructor(
    readonly name: string,
    private readonly entry: 'api' | 'worker' | 'data',
    private readonly env: NodeJS.ProcessEnv,
    private readonly logDir: string,
    /** The log message that says it is serving. */
    private readonly readyMessage: string,
  ) {
    this.pidFile = new PidFile(path.join(logDir, `${name}.pid`), `src/bin/${entry}.ts`);
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts it and resolves once it logs that it serves. */
  async start(): Promise<void> {
    // The same command as `npm run start:<entry>`, without npm in between, so a signal reaches the process itself.
    // The IPC channel makes it stop when we are gone (src/bin/standalone.ts).
    const child = spawn(process.execPath, ['--import', 'tsx', `src/bin/${this.entry}.ts`], {
      cwd: ROOT,
      env: this.env,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    this.child = child;
    if (child.pid !== undefined) this.pidFile.write(child.pid);
    this.log = createWriteStream(path.join(this.logDir, `${this.name}.log`), { flags: 'a' });
    let tail = '';
    let ready: () => void;
    const readyNow = new Promise<void>((resolve) => (ready = resolve));
    const onOutput = (chunk: Buffer) => {
      this.log!.write(chunk);
      tail = (tail + chunk.toString()).slice(-4000);
      if (tail.includes(`"msg":"${this.readyMessage}"`)) ready();
    };
    child.stdout!.on('data', onOutput);
    child.stderr!.on('data', onOutput);
    this.exited = new Promise((resolve) =>
      child.once('exit', () => {
        this.pidFile.remove();
        resolve();
      }),
    );
    const outcome = await Promise.race([
      readyNow.then(() => 'ready' as const),
      this.exited.then(() => 'exited' as const),
    ]);
    if (outcome === 'exited') throw new Error(`${this.name} exited at start. Its last output:\n${tail.trim()}`);
  }

  /** SIGKILL (a crash) or SIGTERM (an orderly stop, bounded: SIGKILL after 30 s); resolves once it is gone. */
  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    if (!this.running) return;
    this.child!.kill(signal);
    const timer = setTimeout(() => this.child!.kill('SIGKILL'), 30_000);
    await this.exited;
    clearTimeout(timer);
    this.log?.end();
  }

  /** A process this DATA_DIR's previous cluster left running (it was killed before it could stop it). */
  stopStale(): Promise<number | undefined> {
    return this.pidFile.stop();
  }
}

export interface Cluster {
  baseUrl: string;
  dataUrl: string;
  /** The application role's, as our processes connect. */
  databaseUrl: string;
  /** The owner's, as the migrations run. */
  databaseOwnerUrl: string;
  temporalAddress: string;
  /** The Temporal Web UI, when the options asked for it. */
  temporalUiUrl?: string;
  demo: DemoCredentials;
  apis: ServiceProcess[];
  workers: ServiceProcess[];
  data: ServiceProcess;
  postgres: { stop(): Promise<void>; start(): Promise<void> };
  temporal: { stop(): Promise<void>; start(): Promise<void> };
  /** Everything, in order: proxy and servers, workers, the Temporal UI, Temporal, PostgreSQL. */
  stop(): Promise<void>;
}

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const { dataDir, say } = options;
  const logDir = path.join(dataDir, 'logs');
  mkdirSync(logDir, { recursive: true });
  const postgresDir = path.join(dataDir, 'postgres');
  const temporalPid = new PidFile(path.join(dataDir, 'temporal-server.pid'), '--env temporal-cluster');
  const temporalUiPid = new PidFile(
    path.join(dataDir, 'temporal-ui-server.pid'),
    `--root ${dataDir} --config ${UI_CONFIG_DIR}`,
  );
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch((error: Error) => say(`  ${error.message}`));
    stops.length = 0;
  };

  const step = progressStep(say);

  const apiPorts = options.apiPorts ?? [options.port + 1, options.port + 2];
  const linkHost = options.host === '0.0.0.0' ? '127.0.0.1' : options.host;
  const baseUrl = `http://${linkHost}:${options.port}`;
  const dataUrl = `http://${linkHost}:${options.dataPort}`;

  try {
    const build = await step('Temporal server build', () => resolveTemporalServer({ say }));
    // Built before anything starts, so a machine without Go fails here rather than with half a cluster up.
    const uiPort = options.temporalUiPort;
    const uiBinary =
      uiPort === undefined ? undefined : await step('Temporal UI server build', () => resolveTemporalUiServer({ say }));

    // A previous cluster on this DATA_DIR that was killed may have left its servers running.
    const stale = [
      await stopPostmaster(postgresDir).then((pid) => pid && `PostgreSQL (pid ${pid})`),
      await temporalPid.stop().then((pid) => pid && `the Temporal server (pid ${pid})`),
      await temporalUiPid.stop().then((pid) => pid && `the Temporal UI server (pid ${pid})`),
    ].filter(Boolean);
    if (stale.length > 0) say(`  ✓ stopped what a previous cluster left running on this DATA_DIR: ${stale.join(', ')}`);

    let postgres: RunningPostgres | undefined;
    const startPostgres = async () => {
      postgres = await startEmbeddedPostgres({ dataDir, port: options.postgresPort });
    };
    const stopPostgres = async () => {
      await postgres?.stop();
      postgres = undefined;
    };
    await step(
      `PostgreSQL (embedded binaries, data in ${path.relative(process.cwd(), postgresDir)}, port ${options.postgresPort})`,
      startPostgres,
    );
    stops.push(stopPostgres);
    // Our processes connect as the application role, the migrations run as the owner (src/db-roles.ts); the Temporal
    // server, which makes its own databases, as the superuser.
    const { url: databaseUrl, ownerUrl, superuserUrl } = postgres!;
    const parsed = new URL(superuserUrl);
    const db: TemporalDatabase = {
      host: parsed.hostname,
      port: Number(parsed.port),
      user: decodeURIComponent(parsed.username),
      password: decodeURIComponent(parsed.password),
    };

    await step('Temporal schemas (temporal, temporal_visibility)', async () => {
      const admin = createDb(withDatabase(superuserUrl, 'postgres'), 1);
      try {
        const found = await admin.query<{ datname: string }>(`SELECT datname FROM pg_database`);
        await setUpTemporalSchemas(build, db, new Set(found.rows.map((row) => row.datname)));
      } finally {
        await admin.end();
      }
    });

    let temporal: RunningTemporalServer | undefined;
    const temporalLog = createWriteStream(path.join(logDir, 'temporal-server.log'), { flags: 'a' });
    const startTemporal = async () => {
      temporal = await startTemporalServer({
        build,
        db,
        port: options.temporalPort,
        namespace: options.namespace,
        dynamicConfig: path.join(ROOT, 'deploy', 'temporal-dynamic-config.yaml'),
        pidFile: temporalPid,
        log: (line) => temporalLog.write(`${line}\n`),
      });
    };
    const stopTemporal = async () => {
      await temporal?.stop();
      temporal = undefined;
    };
    await step(
      `Temporal server ${TEMPORAL_SERVER_VERSION} on PostgreSQL (port ${options.temporalPort})`,
      startTemporal,
    );
    stops.push(stopTemporal);
    const temporalAddress = `127.0.0.1:${options.temporalPort}`;

    let ui: RunningTemporalUiServer | undefined;
    if (uiPort !== undefined && uiBinary !== undefined) {
      const uiLog = createWriteStream(path.join(logDir, 'temporal-ui-server.log'), { flags: 'a' });
      ui = await step(`Temporal UI server ${TEMPORAL_UI_SERVER_VERSION} (port ${uiPort})`, () =>
        startTemporalUiServer({
          binary: uiBinary,
          dataDir,
          host: options.host,
          port: uiPort,
          temporalAddress,
          namespace: options.namespace,
          pidFile: temporalUiPid,
          log: (line) => uiLog.write(`${line}\n`),
        }),
      );
      stops.push(ui.stop);
    }

    await step('Database migrations', () => prepareDatabase({ databaseUrl, ownerUrl }, createLogger('warn')));
    const demoDb = createDb(databaseUrl, 1);
    const demo = await ensureDemoCredentials(demoDb, dataDir).finally(() => demoDb.end());

    const env = (extra: Record<string, string>): NodeJS.ProcessEnv => ({
      ...process.env,
      HOST: options.host,
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      // Migrated above: the processes only check that nothing is missing, and never see the owner's password.
      DATABASE_OWNER_URL: '',
      DATABASE_ADMIN_URL: '',
      // Five processes share PostgreSQL's 100 connections with Temporal's 16.
      DATABASE_POOL_SIZE: '10',
      TEMPORAL_ADDRESS: temporalAddress,
      TEMPORAL_NAMESPACE: options.namespace,
      ...(ui ? { TEMPORAL_UI_URL: ui.url } : {}),
      BASE_URL: baseUrl,
      MCP_URL: dataUrl,
      // One machine, as under `npm start`: webhook receivers may be local.
      WEBHOOK_ALLOW_LOOPBACK: 'true',
      LOG_LEVEL: 'info',
      ...options.env,
      ...extra,
    });
    for (const port of [options.port, options.dataPort, ...apiPorts])
      await assertPortFree(options.host, port, 'PORT, DATA_PORT and the ports after PORT');
    const apis = apiPorts.map(
      // The proxy is the one hop in front of them: per-address limits see the client's address it forwards.
      (port, i) =>
        new ServiceProcess(
          `api-${i + 1}`,
          'api',
          env({ PORT: String(port), TRUST_PROXY: '1' }),
          logDir,
          'main server listening',
        ),
    );
    const workers = Array.from(
      { length: options.workers },
      (_, i) => new ServiceProcess(`worker-${i + 1}`, 'worker', env({}), logDir, 'worker polling'),
    );
    const data = new ServiceProcess(
      'data',
      'data',
      env({ DATA_PORT: String(options.dataPort) }),
      logDir,
      'data server listening',
    );
    const ours = [...workers, ...apis, data];
    for (const service of ours) {
      const pid = await service.stopStale();
      if (pid) say(`  ✓ stopped the ${service.name} a previous cluster left running (pid ${pid})`);
    }
    stops.push(() => Promise.all(workers.map((worker) => worker.stop())).then(() => {}));
    stops.push(() => Promise.all([...apis, data].map((server) => server.stop())).then(() => {}));
    // The workers first, one at a time: each bundles the workflows, which takes both cores for a while.
    for (const worker of workers) await step(`${worker.name} (npm run start:worker)`, () => worker.start());
    await step(
      `${apis.map((api) => api.name).join(', ')} (npm run start:api, ports ${apiPorts.join(', ')}) and data (npm run start:data, port ${options.dataPort})`,
      () => Promise.all([...apis, data].map((server) => server.start())).then(() => {}),
    );
    const proxy: RunningProxy = await startProxy({
      host: options.host,
      port: options.port,
      upstreams: apiPorts.map((port) => `http://127.0.0.1:${port}`),
    });
    stops.push(proxy.stop);

    return {
      baseUrl,
      dataUrl,
      databaseUrl,
      databaseOwnerUrl: ownerUrl,
      temporalAddress,
      temporalUiUrl: ui?.url,
      demo,
      apis,
      workers,
      data,
      postgres: { stop: stopPostgres, start: startPostgres },
      temporal: { stop: stopTemporal, start: startTemporal },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
