// RFC 9457 problem details, made in one place. Handlers throw a Problem; the error middleware renders it.
import type { ProblemCode } from './problem-catalog.ts';
import { STATUS_CODES } from 'node:http';
import type { z } from 'zod';

export interface FieldError {
  path: string;
  message: string;
}

/** RFC 9457 §3.2 extension members of one problem type (deal_conflict's `fields`); never a standard member's name. */
export type ProblemExtensions = Record<string, unknown> & { [K in 'type' | 'title' | 'status' | 'detail' | 'code' | 'errors']?: never };

export class Problem extends Error {
  readonly status: number;
  readonly code: ProblemCode;
  readonly headers: Record<string, string>;
  readonly errors?: FieldError[];
  readonly extensions: ProblemExtensions;

  constructor(
    status: number,
    code: ProblemCode,
    detail: string,
    options: { headers?: Record<string, string>; errors?: FieldError[]; extensions?: ProblemExtensions } = {},
  ) {
    super(detail);
    this.status = status;
    this.code = code;
    this.headers = options.headers ?? {};
    this.errors = options.errors;
    this.extensions = options.extensions ?? {};
  }

  body(baseUrl: string): ProblemBody {
    return {
      type: `${baseUrl}/problems/${this.code}`,
      title: STATUS_CODES[this.status] ?? 'Error',
      status: this.status,
      detail: this.message,
      code: this.code,
      ...(this.errors ? { errors: this.errors } : {}),
      ...this.extensions,
    };
  }
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: FieldError[];
  /** Extension members, see ProblemExtensions. */
  [member: string]: unknown;
}

export const badRequest = (code: ProblemCode, detail: string) => new Problem(400, code, detail);

export const notFound = (detail = 'No such resource.') => new Problem(404, 'not_found', detail);

export function unauthorized(detail: string, challenge?: string): Problem {
  return new Problem(401, 'unauthorized', detail, challenge ? { headers: { 'WWW-Authenticate': challenge } } : {});
}

export function validationFailed(error: z.ZodError, where: 'body' | 'query' | 'path'): Problem {
  const errors = error.issues.flatMap((issue) => {
    const at = (path: PropertyKey[]) => (path.length > 0 ? path.map(String).join('.') : where);
    // One entry per unknown field, named by its own path, so a client can find the misspelling.
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.slice(0, MAX_FIELD_ERRORS).map((key) => ({ path: at([...issue.path, key]), message: `is not a field of this ${where}; remove it or check its spelling` }));
    }
    return [{ path: at(issue.path), message: issue.message }];
  });
  // The first MAX_FIELD_ERRORS only: a body of thousands of unknown fields gets an answer of a few lines, not megabytes.
  const total = error.issues.reduce((sum, issue) => sum + (issue.code === 'unrecognized_keys' ? issue.keys.length : 1), 0);
  const named = errors.slice(0, MAX_FIELD_ERRORS);
  const summary = named.map((e) => `${e.path}: ${e.message}`).join('; ');
  const more = total > named.length ? ` (and ${total - named.length} more)` : '';
  return new Problem(400, 'validation_failed', `The request ${where} is invalid: ${summary}${more}`, { errors: named });
}

/** The most invalid fields one validation_failed names (text.ts names as many refused strings). */
export const MAX_FIELD_ERRORS = 20;
