// The console's actions kit (src/admin/console-actions.ts) over real HTTP, on the data account card: the CSRF token
// checked before anything else, an unknown intent refused, an irreversible action asking first and acting only when
// confirmed (audited, redirected with its notice), and a verb's refusal answered in words with its form free to be sent
// again.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { administrator, type TestAdministrator } from '../console-helpers.ts';
import { issueAccountKey, issueDataKey } from '../../src/data-api/keys.ts';
import { startTestServer, uniqueEmail, type TestServer } from '../helpers.ts';

let server: TestServer;
let admin: TestAdministrator;

beforeAll(async () => {
  server = await startTestServer();
  admin = await administrator(server, 'admin');
});
afterAll(async () => {
  await server?.stop();
});

async function submit(path: string, fields: Record<string, string>, csrf = admin.csrf) {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { Cookie: admin.cookie, 'Content-Type': 'application/x-www-form-urlencoded', 'Accept-Language': 'en' },
    body: new URLSearchParams({ _csrf: csrf, ...fields }).toString(),
  });
}
const count = async (sql: string, values: unknown[]) =>
  Number((await server.services.db.query<{ n: string }>(sql, values)).rows[0].n);
/** A data account with one key, and that key's id. */
async function account(): Promise<{ account_id: string; key_id: string }> {
  const { account_id } = await issueDataKey(server.services.db, { email: uniqueEmail('kit'), tariff: 'free' });
  const { rows } = await server.services.db.query<{ id: string }>('SELECT id FROM data_keys WHERE account_id = $1', [
    account_id,
  ]);
  return { account_id, key_id: rows[0].id };
}
const activeKeys = (accountId: string) =>
  count('SELECT count(*) AS n FROM data_keys WHERE account_id = $1 AND revoked_at IS NULL', [accountId]);

describe('console actions', () => {
  it('check the form token first and refuse an unknown intent', async () => {
    const { account_id, key_id } = await account();
    const path = `/admin/view/data-accounts/${account_id}`;
    const forged = await submit(path, { intent: 'revoke', key_id, confirmed: 'yes' }, 'not-the-token');
    expect(forged.status).toBe(403);
    expect(await activeKeys(account_id)).toBe(1);
    expect((await submit(path, { intent: 'explode' })).status).toBe(400);
  });

  it('ask before an irreversible action and act, audit and redirect only when confirmed', async () => {
    const { account_id, key_id } = await account();
    const path = `/admin/view/data-accounts/${account_id}`;
    const asked = await submit(path, { intent: 'revoke', key_id });
    expect(asked.status).toBe(200);
    const page = await asked.text();
    expect(page).toContain('Yes, revoke');
    expect(page).toContain('name="confirmed" value="yes"');
    expect(page).toContain(`name="key_id" value="${key_id}"`);
    expect(await activeKeys(account_id)).toBe(1);

    const confirmed = await submit(path, { intent: 'revoke', key_id, confirmed: 'yes' });
    expect(confirmed.status).toBe(303);
    expect(confirmed.headers.get('location')).toBe(`${path}?done=revoked`);
    expect(await activeKeys(account_id)).toBe(0);
    expect(
      await count(
        "SELECT count(*) AS n FROM audit_log WHERE action = 'revokeDataKey' AND object_id = $1 AND actor = $2",
        [key_id, admin.email],
      ),
    ).toBe(1);
  });

  it('answer a verb’s refusal in words, and let the same form be sent again once it can succeed', async () => {
    const { account_id, key_id } = await account();
    for (let n = 1; n < 20; n += 1) await issueAccountKey(server.services.db, account_id, `key ${n}`);
    const path = `/admin/view/data-accounts/${account_id}`;
    const form = { _once: randomUUID(), intent: 'issue-key', name: 'the 21st' };
    const refused = await submit(path, form);
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain('The account holds 20 active keys already. Revoke one first.');
    expect(await activeKeys(account_id)).toBe(20);

    expect((await submit(path, { intent: 'revoke', key_id, confirmed: 'yes' })).status).toBe(303);
    const again = await submit(path, form);
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toMatch(/^\/admin\/view\/shown\//);
    expect(
      await count("SELECT count(*) AS n FROM data_keys WHERE account_id = $1 AND name = 'the 21st'", [account_id]),
    ).toBe(1);
  });
});
