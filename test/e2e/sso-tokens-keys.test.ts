// Issue 25, tokens and keys: access tokens are JWTs (RFC 9068) verifiable with the JWKS, yet a revoked one is refused
// by introspection, userinfo and the data server; signing keys rotate with an overlap (a token signed before a rotation
// verifies after it, until its key retires) and by themselves when too old; a refresh-token family ends at its
// absolute lifetime. Key retirement is tested inside a transaction that is rolled back: every test file shares the
// database, and a key retired for real would end the tokens other files are using.
import * as oidc from 'openid-client';
import {
  SignJWT,
  createLocalJWKSet,
  createRemoteJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  generateKeyPair,
  jwtVerify,
} from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataServerUser } from '../../src/data-api/oauth-auth.ts';
import { publishedKeys, rotateIfDue, rotationPolicy } from '../../src/sso/signing-keys.ts';
import { verifyAccessToken } from '../../src/sso/tokens.ts';
import { hashSecret } from '../../src/secrets.ts';
import { administrator } from '../console-helpers.ts';
import { json, post, startTestServer, type TestServer } from '../helpers.ts';
import { REDIRECT_URI, createUser, registerClient, type Client } from '../sso-helpers.ts';

let main: TestServer;
let data: TestServer;
let client: Client;
let user: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  data = await startTestServer({ kind: 'data' });
  main = await startTestServer({ env: { MCP_URL: data.url } });
  // One deployment: the data server knows its own address and the issuer.
  data.services.config.MCP_URL = data.url;
  data.services.config.BASE_URL = main.url;
  client = await registerClient(main);
  user = await createUser(main, 'Token Holder');
});
afterAll(async () => {
  await main?.stop();
  await data?.stop();
});

const admin = () => ({ Authorization: `Bearer ${main.adminToken}` });

async function configuration() {
  return oidc.discovery(new URL(main.url), client.client_id, undefined, oidc.ClientSecretBasic(client.client_secret), {
    execute: [oidc.allowInsecureRequests],
  });
}

/** A sign-in through openid-client with PKCE, for `resource` when given. */
async function signIn(config: oidc.Configuration, scope = 'openid email offline_access', resource?: string) {
  const verifier = oidc.randomPKCECodeVerifier();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state: 'st',
    ...(resource ? { resource } : {}),
  });
  const response = await fetch(url, { redirect: 'manual', headers: { Authorization: `Bearer ${user.token}` } });
  expect(response.status).toBe(302);
  return oidc.authorizationCodeGrant(
    config,
    new URL(response.headers.get('location')!),
    { pkceCodeVerifier: verifier, expectedState: 'st' },
    resource ? { resource } : undefined,
  );
}

const jwks = () => createRemoteJWKSet(new URL(`${main.url}/sso/jwks`), { cacheMaxAge: 0, cooldownDuration: 0 });
const publishedKids = async () =>
  (await json(await fetch(`${main.url}/sso/jwks`))).keys.map((key: { kid: string }) => key.kid) as string[];
const userinfoStatus = async (token: string) =>
  (await fetch(`${main.url}/sso/userinfo`, { headers: { Authorization: `Bearer ${token}` } })).status;
const dataStatus = async (token: string) =>
  (await fetch(`${data.url}/v1/tenders?limit=1`, { headers: { Authorization: `Bearer ${token}` } })).status;

describe('access tokens are JWTs', () => {
  it('carry the RFC 9068 claims, verify with the JWKS, and name the client as audience without a resource', async () => {
    const config = await configuration();
    const tokens = await signIn(config);
    expect(decodeProtectedHeader(tokens.access_token)).toMatchObject({ alg: 'RS256', typ: 'at+jwt' });
    const { payload } = await jwtVerify(tokens.access_token, jwks(), {
      issuer: main.url,
      audience: client.client_id,
      typ: 'at+jwt',
    });
    expect(payload).toMatchObject({ sub: user.id, client_id: client.client_id, scope: 'openid email offline_access' });
    expect(payload.jti).toMatch(/^[0-9a-f-]{36}$/);
    expect(payload.exp! - payload.iat!).toBe(main.services.config.SSO_ACCESS_TOKEN_TTL_SECONDS);
    // The ID token's sub is the access token's.
    expect(decodeJwt(tokens.id_token!).sub).toBe(payload.sub);
    // Each token has its own jti, also after a refresh, whose access token carries the narrowed scope.
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, { scope: 'openid' });
    const next = decodeJwt(refreshed.access_token);
    expect(next.jti).not.toBe(payload.jti);
    expect(next.scope).toBe('openid');
    // A token for the client alone is not the data server's.
    expect(await dataStatus(tokens.access_token)).toBe(401);
  });

  it('for the data server: its audience is the resource; revoked, it is refused though its signature verifies', async () => {
    const config = await configuration();
    const tokens = await signIn(config, 'openid', `${data.url}/mcp/`);
    expect(decodeJwt(tokens.access_token).aud).toBe(`${data.url}/mcp/`);
    expect(await dataStatus(tokens.access_token)).toBe(200);
    expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(true);

    await oidc.tokenRevocation(config, tokens.access_token);
    await expect(jwtVerify(tokens.access_token, jwks(), { issuer: main.url })).resolves.toBeTruthy();
    expect(await dataStatus(tokens.access_token)).toBe(401);
    expect(await userinfoStatus(tokens.access_token)).toBe(401);
    expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
  });

  it('refuses a token with our claims and a live row that a key we never published signed', async () => {
    const config = await configuration();
    const tokens = await signIn(config, 'openid', `${data.url}/mcp/`);
    const claims = decodeJwt(tokens.access_token);
    const { privateKey } = await generateKeyPair('RS256');
    const kid = decodeProtectedHeader(tokens.access_token).kid!;
    const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid }).sign(privateKey);
    expect(await dataStatus(forged)).toBe(401);
    expect(await userinfoStatus(forged)).toBe(401);
    expect((await oidc.tokenIntrospection(config, forged)).active).toBe(false);
    // The genuine one is still fine: the row was not what failed.
    expect(await dataStatus(tokens.access_token)).toBe(200);
  });

  it('refuses an ID token presented as an access token (typ is not at+jwt)', async () => {
    const tokens = await signIn(await configuration(), 'openid');
    expect(await userinfoStatus(tokens.id_token!)).toBe(401);
    expect(await userinfoStatus(tokens.access_token)).toBe(200);
  });
});

describe('signing-key rotation with overlap', () => {
  it('publishes the new key before it signs, keeps the old one until its tokens expire, then retires it', async () => {
    const config = await configuration();
    const before = await signIn(config, 'openid', `${data.url}/mcp/`);
    const oldKid = decodeProtectedHeader(before.access_token).kid!;

    const rotated = await json(
      await post(`${main.url}/admin/sso/signing-keys/rotate`, { activate_after_seconds: 0 }, admin()),
    );
    expect(rotated.replaced).toContainEqual({ kid: oldKid, retires_at: expect.any(String) });
    // The old key leaves the JWKS once every token it signed has expired: the access token lifetime after the new key
    // starts signing, and the clock skew allowed.
    const retiresAt = Date.parse(rotated.replaced.find((key: { kid: string }) => key.kid === oldKid).retires_at);
    const ttlMs = main.services.config.SSO_ACCESS_TOKEN_TTL_SECONDS * 1000;
    expect(retiresAt - Date.parse(rotated.not_before)).toBe(ttlMs + 300_000);
    expect(retiresAt).toBeGreaterThan(decodeJwt(before.access_token).exp! * 1000);

    // During the overlap both keys are published; the token signed before verifies and works everywhere.
    expect(await publishedKids()).toEqual(expect.arrayContaining([oldKid, rotated.kid]));
    await expect(jwtVerify(before.access_token, jwks(), { issuer: main.url, typ: 'at+jwt' })).resolves.toBeTruthy();
    await expect(jwtVerify(before.id_token!, jwks(), { issuer: main.url })).resolves.toBeTruthy();
    expect(await dataStatus(before.access_token)).toBe(200);
    expect((await oidc.tokenIntrospection(config, before.access_token)).active).toBe(true);
    const after = await signIn(config, 'openid', `${data.url}/mcp/`);
    expect(decodeProtectedHeader(after.access_token).kid).toBe(rotated.kid);

    // Its retirement, in a transaction rolled back (the database is shared): the retiring time has come.
    const db = await main.services.db.connect();
    try {
      await db.query('BEGIN');
      await db.query(`UPDATE sso_signing_keys SET retires_at = now() - interval '1 second' WHERE kid = $1`, [oldKid]);
      const keys = await publishedKeys(db);
      expect(keys.map((key) => key.kid)).not.toContain(oldKid);
      expect(keys.map((key) => key.kid)).toContain(rotated.kid);
      await expect(jwtVerify(before.access_token, createLocalJWKSet({ keys }))).rejects.toThrow();
      // The token's row is still live: the signature is what fails, at the data server and at introspection.
      const row = await db.query('SELECT 1 FROM sso_access_tokens WHERE jti = $1 AND revoked_at IS NULL', [
        decodeJwt(before.access_token).jti,
      ]);
      expect(row.rowCount).toBe(1);
      expect(await verifyAccessToken(db, main.url, before.access_token)).toBeUndefined();
      expect(await dataServerUser(db, data.services.config, before.access_token)).toBeUndefined();
      expect(await dataServerUser(db, data.services.config, after.access_token)).toMatchObject({ user_id: user.id });
    } finally {
      await db.query('ROLLBACK');
      db.release();
    }
    expect(await dataStatus(before.access_token)).toBe(200); // rolled back
  });

  it('rotates by itself when the newest key is older than the maximum age, audited as the system', async () => {
    const policy = { ...rotationPolicy(main.services.config), publishSeconds: 600 };
    // Not due: the newest key is younger than a day.
    expect(await rotateIfDue(main.services.db, main.services.masterKey, { ...policy, maxAgeSeconds: 86_400 })).toBe(
      undefined,
    );
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const made = await rotateIfDue(main.services.db, main.services.masterKey, { ...policy, maxAgeSeconds: 1 });
    expect(made).toBeDefined();
    // Published at once, signing only after publishSeconds.
    expect(Date.parse(made!.not_before)).toBeGreaterThan(Date.now() + 500_000);
    expect(await publishedKids()).toContain(made!.kid);
    const signing = decodeProtectedHeader((await signIn(await configuration(), 'openid')).access_token).kid;
    expect(signing).not.toBe(made!.kid);
    const audit = await main.services.db.query(
      `SELECT actor FROM audit_log WHERE action = 'rotateSsoSigningKeyAutomatically' AND object_id = $1`,
      [made!.kid],
    );
    expect(audit.rows).toEqual([{ actor: 'system' }]);
    // The upcoming key is the newest now: no second rotation.
    expect(await rotateIfDue(main.services.db, main.services.masterKey, { ...policy, maxAgeSeconds: 1 })).toBe(
      undefined,
    );
  });

  it('is an operator action in the console: confirmed, audited, listed with each key’s state', async () => {
    const [operator, support] = await Promise.all([administrator(main, 'admin'), administrator(main, 'support')]);
    const path = `${main.url}/admin/view/sso-signing-keys`;
    const submit = (who: typeof operator, fields: Record<string, string>) =>
      fetch(path, {
        method: 'POST',
        redirect: 'manual',
        headers: { Cookie: who.cookie, 'Content-Type': 'application/x-www-form-urlencoded', 'Accept-Language': 'en' },
        body: new URLSearchParams({ _csrf: who.csrf, ...fields }).toString(),
      });
    const count = async () =>
      Number((await main.services.db.query('SELECT count(*) AS n FROM sso_signing_keys')).rows[0].n);
    const before = await count();

    const asked = await submit(operator, {});
    expect(asked.status).toBe(200);
    expect(await asked.text()).toContain('Yes, rotate');
    expect(await count()).toBe(before);
    expect((await submit(support, { confirmed: 'yes' })).status).toBe(403);
    expect(await count()).toBe(before);

    const done = await submit(operator, { confirmed: 'yes' });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/admin/view/sso-signing-keys?done=rotated');
    expect(await count()).toBe(before + 1);
    const audit = await main.services.db.query<{ object_id: string }>(
      `SELECT object_id FROM audit_log WHERE action = 'rotateSsoSigningKey' AND actor = $1`,
      [operator.email],
    );
    expect(await publishedKids()).toContain(audit.rows[0].object_id);

    const page = await (
      await fetch(`${path}?done=rotated`, { headers: { Cookie: support.cookie, 'Accept-Language': 'en' } })
    ).text();
    expect(page).toContain('A new signing key is published.');
    expect(page).toContain(audit.rows[0].object_id);
    expect(page).toContain('published, not signing yet');
    expect(page).toContain('signing');
    expect(page).not.toContain('Rotate the signing key</button>'); // support reads only
  });

  it('keeps private halves sealed and erases those of retired keys', async () => {
    const stored = await main.services.db.query<{ private_sealed: string | null; retired: boolean }>(
      'SELECT private_sealed, retires_at <= now() AS retired FROM sso_signing_keys',
    );
    for (const row of stored.rows) {
      if (row.retired) expect(row.private_sealed).toBeNull();
      else expect(row.private_sealed).toMatch(/^v1\./);
    }
  });
});

describe('a refresh-token family’s absolute lifetime', () => {
  const cap = () => main.services.config.SSO_REFRESH_FAMILY_MAX_SECONDS;
  const familyOf = async (refreshToken: string) => {
    const config = await configuration();
    const found = await main.services.db.query<{ family_id: string }>(
      'SELECT family_id FROM sso_refresh_tokens WHERE token_hash = $1',
      [hashSecret(refreshToken)],
    );
    return { config, family: found.rows[0].family_id };
  };

  it('caps a refreshed token’s expiry at the family’s end', async () => {
    const tokens = await signIn(await configuration());
    const { config, family } = await familyOf(tokens.refresh_token!);
    // The first sign-in was an hour short of the cap ago.
    await main.services.db.query(
      `UPDATE sso_refresh_tokens SET family_started_at = now() - make_interval(secs => $2 - 3600) WHERE family_id = $1`,
      [family, cap()],
    );
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    const introspected = await oidc.tokenIntrospection(config, refreshed.refresh_token!);
    expect(introspected.active).toBe(true);
    expect(introspected.exp! * 1000 - Date.now()).toBeLessThan(3600_000 + 5000);
  });

  it('past it, refresh is invalid_grant and the whole family is revoked', async () => {
    const tokens = await signIn(await configuration());
    const { config, family } = await familyOf(tokens.refresh_token!);
    await main.services.db.query(
      `UPDATE sso_refresh_tokens SET family_started_at = now() - make_interval(secs => $2 + 1) WHERE family_id = $1`,
      [family, cap()],
    );
    expect((await oidc.tokenIntrospection(config, tokens.refresh_token!)).active).toBe(false);
    const error = await oidc.refreshTokenGrant(config, tokens.refresh_token!).then(
      () => undefined,
      (thrown: unknown) => thrown as oidc.ResponseBodyError,
    );
    expect(error).toBeInstanceOf(oidc.ResponseBodyError);
    expect(error!.error).toBe('invalid_grant');
    expect(await userinfoStatus(tokens.access_token)).toBe(401);
    const live = await main.services.db.query(
      'SELECT 1 FROM sso_refresh_tokens WHERE family_id = $1 AND revoked_at IS NULL',
      [family],
    );
    expect(live.rowCount).toBe(0);
  });
});
