// SSO errors are problem details like every other error, with RFC 6749's `error` and `error_description` added as
// extension members, so stock OAuth and OpenID Connect libraries read them too.
import { z } from 'zod';
import type { Middleware } from 'koa';
import { ProblemSchema } from '../http/api.ts';
import { Problem, type ProblemOptions } from '../http/problem.ts';
import type { ProblemCode } from '../http/problem-catalog.ts';

export type OAuthError =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unsupported_grant_type'
  | 'unauthorized_client'
  | 'invalid_token'
  | 'invalid_scope'
  | 'invalid_target'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata';

export class OAuthProblem<C extends ProblemCode = ProblemCode> extends Problem<C> {
  constructor(
    code: C,
    readonly error: OAuthError,
    detail: string,
    options: ProblemOptions<NoInfer<C>> = {},
  ) {
    super(code, detail, { ...options, headers: { 'Cache-Control': 'no-store', ...options.headers } });
  }

  override body(baseUrl: string) {
    return { ...super.body(baseUrl), error: this.error, error_description: this.message };
  }
}

export const invalidClient = (challenge?: string) =>
  new OAuthProblem(
    'invalid_client',
    'invalid_client',
    'The client_id and client_secret do not match a registered SSO client.',
    {
      headers: challenge ? { 'WWW-Authenticate': challenge } : {},
    },
  );

export const invalidRequest = (detail: string) => new OAuthProblem('validation_failed', 'invalid_request', detail);

/** What the SSO and OpenID Connect endpoints answer on 400 and 401: a problem with RFC 6749's members. */
export const OAuthProblemSchema = ProblemSchema.extend({
  error: z
    .enum([
      'invalid_request',
      'invalid_client',
      'invalid_grant',
      'unsupported_grant_type',
      'unauthorized_client',
      'invalid_token',
      'invalid_scope',
      'invalid_target',
      'invalid_redirect_uri',
      'invalid_client_metadata',
    ])
    .describe('RFC 6749 error code'),
  error_description: z.string().describe('The same text as detail'),
}).meta({ title: 'OAuthProblem', description: 'RFC 9457 problem details with the RFC 6749 error members' });

/** The documented 400 and 401 answers of an SSO endpoint. */
export const oauthProblemResponses = {
  400: {
    description:
      'A bad request (`invalid_request`), a code or refresh token that cannot be used (`invalid_grant`), a wider scope (`invalid_scope`)',
    schema: OAuthProblemSchema,
    contentType: 'application/problem+json',
  },
  401: {
    description: 'Wrong client credentials (`invalid_client`) or access token (`invalid_token`)',
    schema: OAuthProblemSchema,
    contentType: 'application/problem+json',
  },
};

/**
 * The same answers for the form-encoded OpenID Connect endpoints, which stock libraries call asking for
 * application/json (RFC 6749 §5.2): those get it, everyone else problem+json (oauthJsonErrors).
 */
export const oauthFormProblemResponses = {
  400: { ...oauthProblemResponses[400], also: { 'application/json': OAuthProblemSchema } },
  401: { ...oauthProblemResponses[401], also: { 'application/json': OAuthProblemSchema } },
};

/**
 * An OAuth error answered as application/json to a client that asks for JSON and not for problem+json, as OAuth
 * libraries do (openid-client refuses any other type); the body is the same problem with RFC 6749's members.
 */
export function oauthJsonErrors(baseUrl: () => string): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      if (
        !(error instanceof OAuthProblem) ||
        ctx.accepts('application/problem+json', 'application/json') !== 'application/json'
      )
        throw error;
      ctx.status = error.status;
      for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
      ctx.body = error.body(baseUrl());
      ctx.type = 'application/json';
    }
  };
}

/** The route's own validation failures as `invalid_request`, so OAuth libraries read them too. */
export function asOAuthProblem(problem: Problem): Problem {
  if (problem instanceof OAuthProblem || problem.status !== 400) return problem;
  return new OAuthProblem(problem.code, 'invalid_request', problem.message, {
    status: problem.status,
    headers: problem.headers,
    errors: problem.errors,
  });
}
