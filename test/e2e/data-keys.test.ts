// POST /admin/data-keys: svc_mcp_ keys for an account with a tariff, stored as hashes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountIdForKey, TARIFF_QUOTAS } from '../../src/data-api/keys.ts';
import { findUserByEmail } from '../../src/accounts/users.ts';
import { json, post, startTestServer, uniqueEmail, type TestServer } from '../helpers.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.stop());

const issue = (body: unknown) =>
  post(`${server.url}/admin/data-keys`, body, { Authorization: `Bearer ${server.adminToken}` });

describe('POST /admin/data-keys', () => {
  it('issues a key to a new account on the free tariff by default', async () => {
    const email = uniqueEmail('analyst');
    const response = await issue({ email });
    expect(response.status).toBe(201);
    const body = await json(response);
    expect(body).toEqual({
      key: expect.stringMatching(/^svc_mcp_[A-Za-z0-9_-]{43}$/),
      account_id: expect.any(String),
      tariff: 'free',
    });
    expect((await findUserByEmail(server.services.db, email))?.id).toBe(body.account_id);
    expect(await accountIdForKey(server.services.db, body.key)).toBe(body.account_id);
    const dump = JSON.stringify(
      (await server.services.db.query('SELECT * FROM data_keys WHERE account_id = $1', [body.account_id])).rows,
    );
    expect(dump).not.toContain(body.key.slice('svc_mcp_'.length));
  });

  it('gives one account several keys and the latest tariff', async () => {
    const email = uniqueEmail('team');
    const first = await json(await issue({ email, tariff: 'free' }));
    const second = await json(await issue({ email: email.toUpperCase(), tariff: 'pro' }));
    expect(second.account_id).toBe(first.account_id);
    expect(second.key).not.toBe(first.key);
    const account = await server.services.db.query('SELECT tariff FROM data_accounts WHERE id = $1', [
      first.account_id,
    ]);
    expect(account.rows[0].tariff).toBe('pro');
    expect(await accountIdForKey(server.services.db, first.key)).toBe(first.account_id);
  });

  it('knows the tariffs of the spec', () => {
    expect(TARIFF_QUOTAS).toEqual({ free: 1000, pro: 50000, business: 500000, enterprise: null });
  });

  it('refuses an unknown tariff or a bad e-mail with 400 and creates nothing', async () => {
    const email = uniqueEmail('nobody');
    for (const body of [{ email, tariff: 'gold' }, { email: 'not-an-email' }, {}]) {
      const response = await issue(body);
      expect(response.status).toBe(400);
      expect((await json(response)).code).toBe('validation_failed');
    }
    expect(await findUserByEmail(server.services.db, email)).toBeUndefined();
  });

  it('requires an administrator', async () => {
    expect((await post(`${server.url}/admin/data-keys`, { email: uniqueEmail() })).status).toBe(401);
  });
});
