// `npm run start:cluster`: the production topology on this machine (src/dev/cluster.ts): PostgreSQL, a Temporal
// server on it and its Web UI, two main servers behind a round-robin proxy, two workers and the data server, each its
// own process. Ctrl-C stops them in order and leaves no process behind.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { EnvSchema } from '../config.ts';
import { startCluster, type Cluster } from '../dev/cluster.ts';
import { TEMPORAL_UI_SERVER_VERSION } from '../dev/temporal-ui-server.ts';

// Its own variables on top of the usual ones (README): a data folder apart from `npm start`'s, whose Temporal state
// lives in SQLite, not in this PostgreSQL.
const Env = z.object({
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: z.coerce.number().int().min(1).max(65535).default(3000),
  DATA_PORT: z.coerce.number().int().min(1).max(65535).default(3100),
  POSTGRES_PORT: z.coerce.number().int().min(1).max(65535).default(5433),
  TEMPORAL_PORT: z.coerce.number().int().min(1).max(65527).default(7233),
  // As the service reads it (src/config.ts), so that one variable moves the UI under both `npm start` and the cluster.
  TEMPORAL_UI_PORT: EnvSchema.shape.TEMPORAL_UI_PORT,
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  CLUSTER_DATA_DIR: z.string().min(1).default('./.data-cluster'),
  CLUSTER_WORKERS: z.coerce.number().int().min(1).max(8).default(2),
});

if (process.env.SVC_SUPERVISED === '1') {
  await run();
} else {
  // As `npm start` does: Ctrl-C signals the terminal's whole process group, which would stop PostgreSQL under workers
  // still draining. The cluster runs in a process group of its own and we pass signals on.
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], {
    detached: true,
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, SVC_SUPERVISED: '1' },
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => child.kill('SIGTERM'));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

async function run(): Promise<void> {
  const parsed = Env.safeParse(Object.fromEntries(Object.entries(process.env).filter(([, value]) => value)));
  if (!parsed.success) {
    console.error(
      `Invalid configuration:\n${parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`).join('\n')}`,
    );
    process.exit(1);
  }
  const env = parsed.data;
  const say = (message: string) => process.stdout.write(`${message}\n`);
  const started = Date.now();
  let cluster: Cluster | undefined;
  let stopping = false;
  const stop = async (reason: string, code: number) => {
    if (stopping) return;
    stopping = true;
    say(`\nStopping (${reason})…`);
    await cluster?.stop();
    say('Stopped.');
    process.exit(code);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop(signal, 0));
  process.on('disconnect', () => void stop('parent exited', 0));

  const dataDir = path.resolve(env.CLUSTER_DATA_DIR);
  try {
    cluster = await startCluster({
      dataDir,
      host: env.HOST,
      port: env.PORT,
      dataPort: env.DATA_PORT,
      postgresPort: env.POSTGRES_PORT,
      temporalPort: env.TEMPORAL_PORT,
      temporalUiPort: env.TEMPORAL_UI_PORT,
      namespace: env.TEMPORAL_NAMESPACE,
      workers: env.CLUSTER_WORKERS,
      say,
    });
  } catch (error) {
    say(`\n✗ ${(error as Error).message}`);
    await stop('start failed', 1);
    return;
  }
  const c = cluster;
  const rows: Array<[string, string]> = [
    [
      'API (proxy)',
      `${c.baseUrl}/api  → ${c.apis.map((api) => `${api.name} (pid ${api.pid})`).join(', ')}, round robin`,
    ],
    ['API docs', `${c.baseUrl}/docs`],
    ['Data API, MCP', `${c.dataUrl}/v1  ${c.dataUrl}/mcp/  (data, pid ${c.data.pid})`],
    ['Workers', c.workers.map((worker) => `${worker.name} (pid ${worker.pid})`).join(', ')],
    ['Temporal', `${c.temporalAddress} (server on PostgreSQL, namespace ${env.TEMPORAL_NAMESPACE})`],
    [
      'Temporal UI',
      `${c.temporalUiUrl}  (UI server ${TEMPORAL_UI_SERVER_VERSION}; the console's "Open in Temporal" links lead here)`,
    ],
    ['PostgreSQL', `127.0.0.1:${env.POSTGRES_PORT} (databases svc, temporal, temporal_visibility)`],
    ['Logs', `${path.relative(process.cwd(), path.join(dataDir, 'logs'))}/<process>.log`],
  ];
  const credentials: Array<[string, string]> = [
    ['Admin token', c.demo.admin_token],
    ['Marketplace', `${c.demo.marketplace.name} (${c.demo.marketplace.mode}), id ${c.demo.marketplace.id}`],
    ['  secret key', c.demo.marketplace.secret_key],
    ['  public key', c.demo.marketplace.public_key],
    ['Data key (free)', c.demo.data_key.key],
  ];
  const table = (items: Array<[string, string]>) => items.map(([k, v]) => `  ${k.padEnd(16)} ${v}`).join('\n');
  say(
    [
      '',
      `The cluster is running (started in ${((Date.now() - started) / 1000).toFixed(1)} s).`,
      '',
      table(rows),
      '',
      `Demo credentials (kept in ${path.relative(process.cwd(), path.join(dataDir, 'demo-credentials.json'))}):`,
      table(credentials),
      '',
      `Try: curl -H 'X-Svc-Key: ${c.demo.marketplace.secret_key}' ${c.baseUrl}/api/mkt/ping`,
      '',
      'Press Ctrl-C to stop.',
      '',
    ].join('\n'),
  );
}
