// RFC 9457 problem details, made in one place. Handlers throw problem(code, detail); the error middleware renders it.
// The catalog (problem-catalog.ts) owns each code's status and words: a call site names the code, never the status.
import { problemStatus, type ProblemCode, type ProblemStatus } from './problem-catalog.ts';
import { STATUS_CODES } from 'node:http';
import type { z } from 'zod';

export interface FieldError {
  path: string;
  message: string;
}

/** RFC 9457 §3.2 extension members of one problem type (deal_conflict's `fields`); never a standard member's name. */
export type ProblemExtensions = Record<string, unknown> & {
  [K in 'type' | 'title' | 'status' | 'detail' | 'code' | 'errors']?: never;
};

export interface ProblemOptions<C extends ProblemCode = ProblemCode> {
  /** Another status the catalog lists for this code (a code answers with its first one otherwise). */
  status?: ProblemStatus<C>;
  headers?: Record<string, string>;
  errors?: FieldError[];
  extensions?: ProblemExtensions;
}

export class Problem<C extends ProblemCode = ProblemCode> extends Error {
  readonly status: ProblemStatus<C>;
  readonly code: C;
  readonly headers: Record<string, string>;
  readonly errors?: FieldError[];
  readonly extensions: ProblemExtensions;

  constructor(code: C, detail: string, options: ProblemOptions<NoInfer<C>> = {}) {
    super(detail);
    this.status = options.status ?? problemStatus(code);
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

/** The problem of this code, with the status the catalog gives it (or another the catalog lists, as `status`). */
export function problem<C extends ProblemCode>(
  code: C,
  detail: string,
  options?: ProblemOptions<NoInfer<C>>,
): Problem<C> {
  return new Problem(code, detail, options);
}

export const notFound = (detail = 'No such resource.') => problem('not_found', detail);

export function unauthorized(detail: string, challenge?: string): Problem {
  return problem('unauthorized', detail, challenge ? { headers: { 'WWW-Authenticate': challenge } } : {});
}

export function validationFailed(error: z.ZodError, where: 'body' | 'query' | 'path'): Problem {
  const errors = error.issues.flatMap((issue) => {
    const at = (path: PropertyKey[]) => (path.length > 0 ? path.map(String).join('.') : where);
    // One entry per unknown field, named by its own path, so a client can find the misspelling.
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.slice(0, MAX_FIELD_ERRORS).map((key) => ({
        path: at([...issue.path, key]),
        message: `is not a field of this ${where}; remove it or check its spelling`,
      }));
    }
    return [{ path: at(issue.path), message: issue.message }];
  });
  // The first MAX_FIELD_ERRORS only: a body of thousands of unknown fields gets an answer of a few lines, not megabytes.
  const total = error.issues.reduce(
    (sum, issue) => sum + (issue.code === 'unrecognized_keys' ? issue.keys.length : 1),
    0,
  );
  const named = errors.slice(0, MAX_FIELD_ERRORS);
  const summary = named.map((e) => `${e.path}: ${e.message}`).join('; ');
  const more = total > named.length ? ` (and ${total - named.length} more)` : '';
  return problem('validation_failed', `The request ${where} is invalid: ${summary}${more}`, { errors: named });
}

/** The most invalid fields one validation_failed names (text.ts names as many refused strings). */
export const MAX_FIELD_ERRORS = 20;
