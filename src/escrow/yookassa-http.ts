// YooKassa API v3 over HTTP, shared by the two-stage and the Safe Deal providers: HTTP Basic auth, an Idempotence-Key
// on every POST (YooKassa replays the first answer for the same key), the answer read through the caller's schema.
// Errors: a refusal (4xx other than 429) is final, an ApplicationFailure Temporal does not retry (`acquirer_refused`);
// 429, 5xx and network failures are plain Errors, retried with the same key, as YooKassa asks ("result unknown, repeat").
import { z } from 'zod';
import { refuse } from '../temporal/refusal.ts';

export interface YooKassaOptions {
  /** `https://api.yookassa.ru/v3`, without a trailing slash. */
  apiUrl: string;
  shopId: string;
  secretKey: string;
  /** Per request; below the activity's start-to-close timeout so a hung call is retried, not the activity lost. */
  timeoutMs?: number;
}

const ErrorSchema = z.looseObject({
  id: z.string().optional(),
  code: z.string().optional(),
  description: z.string().optional(),
  parameter: z.string().optional(),
});

const IDEMPOTENCE_KEY_MAX = 64;

export class YooKassaHttp {
  private readonly authorization: string;
  private readonly timeoutMs: number;

  constructor(private readonly options: YooKassaOptions) {
    this.authorization = `Basic ${Buffer.from(`${options.shopId}:${options.secretKey}`).toString('base64')}`;
    this.timeoutMs = options.timeoutMs ?? 15_000;
  }

  /** One call; `action` says in words what it does, for the errors ("create the payment"). */
  async request<T>(
    action: string,
    method: 'GET' | 'POST',
    path: string,
    schema: z.ZodType<T>,
    idempotenceKey?: string,
    body?: object,
  ): Promise<T> {
    const headers: Record<string, string> = { Authorization: this.authorization, Accept: 'application/json' };
    if (method === 'POST') {
      if (!idempotenceKey || idempotenceKey.length > IDEMPOTENCE_KEY_MAX) {
        throw refuse(
          'acquirer_refused',
          `An Idempotence-Key of 1 to ${IDEMPOTENCE_KEY_MAX} characters is required to ${action}.`,
        );
      }
      headers['Idempotence-Key'] = idempotenceKey;
      headers['Content-Type'] = 'application/json';
    }
    let status: number;
    let text: string;
    try {
      const response = await fetch(`${this.options.apiUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        redirect: 'error',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = response.status;
      text = await response.text();
    } catch (error) {
      throw new Error(`YooKassa did not answer the request to ${action}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    if (status >= 200 && status < 300) {
      const parsed = schema.safeParse(parseJson(text));
      if (!parsed.success) throw new Error(`YooKassa answered the request to ${action} with an unexpected body.`);
      return parsed.data;
    }
    const problem = ErrorSchema.safeParse(parseJson(text));
    const { code, description, parameter, id } = problem.success ? problem.data : {};
    const what = `${description ?? 'no description'} (HTTP ${status}${code ? `, ${code}` : ''}${parameter ? `, parameter ${parameter}` : ''}${id ? `, error id ${id}` : ''})`;
    if (status === 429 || status >= 500 || status < 400) {
      throw new Error(`YooKassa could not ${action} for now: ${what}. Retrying with the same Idempotence-Key is safe.`);
    }
    throw refuse('acquirer_refused', `YooKassa refused to ${action}: ${what}.`, {
      details: [{ httpStatus: status, code, parameter }],
    });
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
