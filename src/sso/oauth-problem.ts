// SSO errors are problem details like every other error, with RFC 6749's `error` and `error_description` added as
// extension members, so stock OAuth and OpenID Connect libraries read them too.
import { Problem } from '../http/problem.ts';

export type OAuthError = 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unsupported_grant_type' | 'invalid_token';

export class OAuthProblem extends Problem {
  constructor(
    status: number,
    code: string,
    readonly error: OAuthError,
    detail: string,
    headers: Record<string, string> = {},
  ) {
    super(status, code, detail, { headers: { 'Cache-Control': 'no-store', ...headers } });
  }

  override body(baseUrl: string) {
    return { ...super.body(baseUrl), error: this.error, error_description: this.message };
  }
}

export const invalidClient = (challenge?: string) =>
  new OAuthProblem(401, 'invalid_client', 'invalid_client', 'The client_id and client_secret do not match a registered SSO client.', {
    ...(challenge ? { 'WWW-Authenticate': challenge } : {}),
  });

export const invalidRequest = (detail: string) => new OAuthProblem(400, 'validation_failed', 'invalid_request', detail);
