// Structured logs (pino). Secrets never reach a log line: known secret fields are redacted wherever they appear.
import { pino, type Logger } from 'pino';

export type { Logger };

const SECRET_KEYS = [
  'authorization',
  'cookie',
  'set-cookie',
  'x-svc-key',
  'x-svc-widget-token',
  'password',
  'token',
  'secret',
  'secret_key',
  'public_key',
  'client_secret',
  'code',
  'key',
  'api_key',
  'DATABASE_URL',
  'DATABASE_OWNER_URL',
  'DATABASE_ADMIN_URL',
  'SMTP_URL',
  'SVC_MASTER_KEY',
  'SVC_BOOTSTRAP_ADMIN_TOKEN',
];

export const REDACT_PATHS = SECRET_KEYS.flatMap((key) => [key, `*.${key}`, `*.*.${key}`].map(quotePath));

function quotePath(path: string): string {
  return path
    .split('.')
    .map((part) => (part === '*' || /^[A-Za-z_$][\w$]*$/.test(part) ? part : `["${part}"]`))
    .join('.')
    .replace(/\.\[/g, '[');
}

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      serializers: { err: pino.stdSerializers.err },
    },
    destination,
  );
}
