// One schema over the environment, read once at start. Every variable is optional; see README's table.
import { z } from 'zod';
import path from 'node:path';

const port = z.coerce.number().int().min(1).max(65535);
const positiveInt = z.coerce.number().int().positive();
const url = z.url({ protocol: /^https?$/ }).transform((value) => value.replace(/\/+$/, ''));
const optionalText = z.string().trim().min(1).optional();

export const EnvSchema = z.object({
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: port.default(3000),
  DATA_PORT: port.default(3100),
  // Reverse proxies in front of both servers; the client address is taken that many hops from the right of X-Forwarded-For.
  TRUST_PROXY: z
    .string()
    .trim()
    .regex(/^\d{1,2}$/, 'must be the number of reverse proxies in front of the servers: 0 (none), 1, 2, …')
    .transform(Number)
    .default(0),
  BASE_URL: url.optional(),
  MCP_URL: url.optional(),
  DATA_DIR: z.string().min(1).default('./.data'),
  // The role the processes connect as (least privilege: owns nothing, not a superuser; README: PostgreSQL roles).
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  // The owner of the database's objects, that runs the migrations; unset: DATABASE_URL's role runs them when it can.
  DATABASE_OWNER_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  // Read by `npm run migrate` alone: a superuser that makes the two roles of the URLs above and the database.
  DATABASE_ADMIN_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  DATABASE_POOL_SIZE: positiveInt.default(20),
  // Statements run often are prepared on each connection (src/db.ts); a pooler in front of PostgreSQL that cannot keep
  // prepared statements per client (PgBouncer's transaction mode before 1.21) needs false.
  DATABASE_PREPARED_STATEMENTS: z
    .enum(['true', 'false'])
    .default('true')
    .transform((value) => value === 'true'),
  TEMPORAL_ADDRESS: optionalText,
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_PORT: port.default(7233),
  TEMPORAL_UI_PORT: port.default(8233),
  // Where operators open a deal's workflow from the console (unset: the Web UI of `npm start` or the cluster, on
  // TEMPORAL_UI_PORT).
  TEMPORAL_UI_URL: url.optional(),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('svc'),
  TEMPORAL_CLI: optionalText,
  TEMPORAL_API_KEY: optionalText,
  TEMPORAL_TLS: z.enum(['true', 'false']).optional(),
  POSTGRES_PORT: port.default(5433),
  SVC_BOOTSTRAP_ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  SVC_MASTER_KEY: z
    .string()
    .regex(/^[A-Za-z0-9+/]{43}=?$/, 'must be 32 bytes in base64 (openssl rand -base64 32)')
    .optional(),
  SSO_CODE_TTL_SECONDS: positiveInt.default(300),
  SSO_ACCESS_TOKEN_TTL_SECONDS: positiveInt.default(3600),
  SSO_REFRESH_TOKEN_TTL_SECONDS: positiveInt.default(2_592_000),
  // A refresh-token family's absolute lifetime from its first sign-in, however often it is refreshed.
  SSO_REFRESH_FAMILY_MAX_SECONDS: positiveInt.default(2_592_000),
  // Signing-key rotation: a new key is published that long before it signs; a key older than the maximum age is
  // rotated by itself (0: only by an operator).
  SSO_SIGNING_KEY_PUBLISH_SECONDS: z.coerce.number().int().min(0).default(600),
  SSO_SIGNING_KEY_MAX_AGE_SECONDS: z.coerce.number().int().min(0).default(7_776_000),
  // Development only: client ID metadata documents may be fetched from the loopback (and over plain http there); every
  // other private or special-use address stays refused.
  SSO_CLIENT_METADATA_ALLOW_LOOPBACK: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true'),
  // Wrong passwords in a window: per (account, address), per address, and per account only a high ceiling, so that
  // strangers cannot lock the owner out (src/accounts/login-limits.ts).
  SSO_LOGIN_ACCOUNT_ADDRESS_LIMIT: positiveInt.default(5),
  SSO_LOGIN_ADDRESS_LIMIT: positiveInt.default(20),
  SSO_LOGIN_ACCOUNT_LIMIT: positiveInt.default(100),
  SSO_LOGIN_WINDOW_SECONDS: positiveInt.default(900),
  WEBHOOK_RETRY_BASE_SECONDS: positiveInt.default(30),
  // Webhooks may target the loopback (a receiver on a developer's machine); every other special-use address stays refused.
  WEBHOOK_ALLOW_LOOPBACK: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true'),
  // A tender search statement still running after this is stopped (503 search_timeout).
  SEARCH_TIMEOUT_MS: positiveInt.default(3000),
  // How long one webhook attempt waits for the answer. The outbox's drainer holds a delivery for 60 s while it sends
  // (src/webhooks/outbox.ts): the attempt and its record must end well within that, or another drainer would send it too.
  WEBHOOK_TIMEOUT_SECONDS: positiveInt
    .max(25, 'must be at most 25 (a drainer holds a delivery for 60 s while it sends it)')
    .default(15),
  SMTP_URL: z.url({ protocol: /^smtps?$/ }).optional(),
  DOCUMENT_STORE: z.enum(['filesystem', 's3']).default('filesystem'),
  S3_BUCKET: optionalText,
  S3_ENDPOINT: url.optional(),
  S3_REGION: z.string().min(1).default('us-east-1'),
  S3_ACCESS_KEY_ID: optionalText,
  S3_SECRET_ACCESS_KEY: optionalText,
  S3_FORCE_PATH_STYLE: z.enum(['true', 'false']).default('false'),
  YOOKASSA_API_URL: url.default('https://api.yookassa.ru/v3'),
  YOOKASSA_SHOP_ID: optionalText,
  YOOKASSA_SECRET_KEY: optionalText,
  ESCROW_HOLD_POLICY: z.enum(['refund', 'release']).default('refund'),
  ESCROW_HOLD_MARGIN_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .default(12 * 3600),
  DEAL_WORKFLOW_HISTORY_LIMIT: positiveInt.default(10_000),
  // From this attempt on, a failing activity is an error log line and a count (src/temporal/activity-alerts.ts); the worker
  // serves its Prometheus metrics at WORKER_METRICS_ADDRESS when set.
  ACTIVITY_ALERT_ATTEMPTS: positiveInt.default(10),
  // The worker's sizing (docs/performance.md): threads that run workflow code, and how many workflows it keeps in
  // memory so a change does not replay the deal's history first (unset: the SDK's defaults, one thread and a cache
  // sized from the heap).
  WORKER_WORKFLOW_THREADS: positiveInt.optional(),
  WORKER_MAX_CACHED_WORKFLOWS: z.coerce.number().int().min(0).optional(),
  WORKER_METRICS_ADDRESS: z
    .string()
    .trim()
    .regex(/^(\[[0-9a-fA-F:.]+\]|[\w.-]+):\d{1,5}$/, 'must be host:port')
    .optional(),
  CABINET_TOKEN_TTL_SECONDS: positiveInt.default(12 * 3600),
  WIDGET_TOKEN_TTL_SECONDS: positiveInt.default(1800),
  WIDGET_CREATE_LIMIT_PER_KEY: positiveInt.default(600),
  WIDGET_CREATE_LIMIT_PER_ADDRESS: positiveInt.default(30),
  WIDGET_FIND_LIMIT_PER_ADDRESS: positiveInt.default(300),
  WIDGET_CREATE_WINDOW_SECONDS: positiveInt.default(600),
  SSO_REGISTRATION_LIMIT_PER_ADDRESS: positiveInt.default(20),
  SSO_REGISTRATION_WINDOW_SECONDS: positiveInt.default(3600),
  NODE_ENV: z.string().optional(),
  MAIL_FROM: z.string().min(3).default('svc <no-reply@localhost>'),
  EIS_NOTICES_URL: url.optional(),
  TED_SEARCH_URL: url.optional(),
  OCDS_SOURCES: z
    .string()
    .regex(
      /^\s*[a-z0-9][a-z0-9-]{0,62}=https?:\/\/\S+(\s*,\s*[a-z0-9][a-z0-9-]{0,62}=https?:\/\/\S+)*\s*$/,
      'must be key=url pairs separated by commas',
    )
    .optional(),
  DATA_SYNC_INTERVAL_SECONDS: z.coerce.number().int().min(60).default(3600),
  SAMPLE_DATA: z.enum(['true', 'false']).default('true'),
  // `npm start`'s orderly stop gets this long; then it stops PostgreSQL and Temporal anyway and exits.
  SHUTDOWN_LIMIT_SECONDS: positiveInt.default(45),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type Env = z.infer<typeof EnvSchema>;

export interface Config extends Omit<Env, 'BASE_URL' | 'MCP_URL' | 'DATA_DIR'> {
  BASE_URL: string;
  MCP_URL: string;
  /** Absolute path. */
  DATA_DIR: string;
  /** True when neither DATABASE_URL nor TEMPORAL_ADDRESS point elsewhere: `npm start` runs them itself. */
  embeddedPostgres: boolean;
  embeddedTemporal: boolean;
}

export class ConfigError extends Error {}

/** Validates the environment; a bad value names its variable. Blank values count as unset. */
export function parseConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const result = EnvSchema.safeParse(present);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(
      `Invalid configuration:\n${lines.join('\n')}\nFix these environment variables and start again.`,
    );
  }
  const values = result.data;
  if (values.DATABASE_OWNER_URL && !values.DATABASE_URL) {
    throw new ConfigError(
      'Invalid configuration:\n  DATABASE_OWNER_URL: is for an external PostgreSQL, with DATABASE_URL for the role the processes connect as; set both, or neither for the embedded one.',
    );
  }
  const linkHost = values.HOST === '0.0.0.0' || values.HOST === '::' ? '127.0.0.1' : values.HOST;
  return {
    ...values,
    BASE_URL: values.BASE_URL ?? `http://${linkHost}:${values.PORT}`,
    MCP_URL: values.MCP_URL ?? `http://${linkHost}:${values.DATA_PORT}`,
    DATA_DIR: path.resolve(values.DATA_DIR),
    TEMPORAL_ADDRESS: values.TEMPORAL_ADDRESS ?? `127.0.0.1:${values.TEMPORAL_PORT}`,
    TEMPORAL_UI_URL: values.TEMPORAL_UI_URL ?? `http://${linkHost}:${values.TEMPORAL_UI_PORT}`,
    embeddedPostgres: values.DATABASE_URL === undefined,
    embeddedTemporal: values.TEMPORAL_ADDRESS === undefined,
  };
}

let loaded: Config | undefined;

/** The process-wide configuration, parsed on first use. */
export function config(): Config {
  loaded ??= parseConfig();
  return loaded;
}
