// Administrator authentication, marketplace activation with mk_/pk_ keys, and X-Svc-Key on GET /api/mkt/ping.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/secrets.ts';
import { json, post, startTestServer, type TestServer, uniqueId, UUID_PATTERN } from '../helpers.ts';

const BOOTSTRAP = 'bootstrap-admin-token-for-tests';
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ env: { SVC_BOOTSTRAP_ADMIN_TOKEN: BOOTSTRAP } });
});
afterAll(() => server?.stop());

const admin = (token = server.adminToken) => ({ Authorization: `Bearer ${token}` });
const createMarketplace = (body: unknown, token?: string) =>
  post(`${server.url}/admin/marketplaces`, body, admin(token));
const ping = (key?: string) => fetch(`${server.url}/api/mkt/ping`, { headers: key ? { 'X-Svc-Key': key } : {} });

describe('administrator tokens', () => {
  it('refuses a missing or wrong token with 401 and a bearer challenge', async () => {
    const missing = await fetch(`${server.url}/admin/marketplaces`, { method: 'POST' });
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(await json(missing)).toMatchObject({ code: 'unauthorized' });

    const wrong = await createMarketplace({ name: 'X' }, `${server.adminToken}x`);
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toContain('invalid_token');
  });

  it('accepts SVC_BOOTSTRAP_ADMIN_TOKEN when it is set', async () => {
    expect((await createMarketplace({ name: 'Bootstrapped' }, BOOTSTRAP)).status).toBe(201);
  });

  it('stores tokens only as hashes', async () => {
    const rows = await server.services.db.query('SELECT token_hash FROM admin_tokens');
    const hashes = rows.rows.map((row) => Buffer.from(row.token_hash).toString('hex'));
    expect(hashes).toContain(hashSecret(server.adminToken).toString('hex'));
    const dump = JSON.stringify((await server.services.db.query('SELECT * FROM admin_tokens')).rows);
    expect(dump).not.toContain(server.adminToken);
  });
});

describe('POST /admin/marketplaces', () => {
  it('activates a marketplace and shows its mk_ and pk_ keys once', async () => {
    const response = await createMarketplace({
      name: 'Shop One',
      mode: 'live',
      allowed_origins: ['https://shop.example'],
    });
    expect(response.status).toBe(201);
    const body = await json(response);
    expect(body).toMatchObject({
      id: expect.stringMatching(UUID_PATTERN),
      name: 'Shop One',
      mode: 'live',
      secret_key: expect.stringMatching(/^mk_[A-Za-z0-9_-]{43}$/),
      public_key: expect.stringMatching(/^pk_[A-Za-z0-9_-]{32}$/),
      sso_client: null,
      allowed_origins: ['https://shop.example'],
    });
    const stored = await server.services.db.query(
      'SELECT key_hash, kind FROM marketplace_keys WHERE marketplace_id = $1',
      [body.id],
    );
    expect(stored.rows).toHaveLength(2);
    const dump = JSON.stringify(stored.rows);
    expect(dump).not.toContain(body.secret_key.slice(3));
    expect(dump).not.toContain(body.public_key.slice(3));
  });

  it('defaults to sandbox mode', async () => {
    expect(await json(await createMarketplace({ name: 'Sandbox shop' }))).toMatchObject({ mode: 'sandbox' });
  });

  it.each([
    [{}, 'name'],
    [{ name: '   ' }, 'name'],
    [{ name: 'X', mode: 'test' }, 'mode'],
    [{ name: 'X', sso_redirect_uri: 'javascript:alert(1)' }, 'sso_redirect_uri'],
    [{ name: 'X', allowed_origins: ['https://shop.example/'] }, 'allowed_origins.0'],
    [{ name: 'X', allowed_origins: ['*'] }, 'allowed_origins.0'],
  ])('refuses %j with 400 naming %s and changes nothing', async (given, field) => {
    // A name of its own where the name is not what is refused: other files make marketplaces at the same time, so only
    // those of this name are counted.
    const body = (given as { name?: unknown }).name === 'X' ? { ...given, name: uniqueId('refused') } : given;
    const countMarketplaces = async () =>
      (
        await server.services.db.query('SELECT count(*) FROM marketplaces WHERE name = $1', [
          String((body as { name?: unknown }).name ?? ''),
        ])
      ).rows[0].count;
    const before = await countMarketplaces();
    const response = await createMarketplace(body);
    expect(response.status).toBe(400);
    const problem = await json(response);
    expect(problem.code).toBe('validation_failed');
    expect(problem.errors.map((error: { path: string }) => error.path)).toContain(field);
    expect(await countMarketplaces()).toBe(before);
  });
});

describe('GET /api/mkt/ping', () => {
  it('answers the secret key with the marketplace it belongs to', async () => {
    const created = await json(await createMarketplace({ name: 'Ping shop' }));
    const response = await ping(created.secret_key);
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ ok: true, marketplace_id: created.id, name: 'Ping shop', mode: 'sandbox' });
  });

  it('refuses a missing, unknown or public key with 401', async () => {
    const created = await json(await createMarketplace({ name: 'Key shop' }));
    for (const key of [undefined, 'mk_unknown', `${created.secret_key}x`, created.public_key, server.adminToken]) {
      const response = await ping(key);
      expect(response.status, String(key)).toBe(401);
      expect((await json(response)).code).toBe('unauthorized');
    }
    expect((await json(await ping(created.public_key))).detail).toContain('public pk_ key');
  });

  it('refuses the key of a deactivated marketplace', async () => {
    const created = await json(await createMarketplace({ name: 'Closed shop' }));
    await server.services.db.query('UPDATE marketplaces SET active = false WHERE id = $1', [created.id]);
    expect((await ping(created.secret_key)).status).toBe(401);
  });
});
