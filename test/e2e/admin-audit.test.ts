// The audit log: every administrative change is written with its actor, action, object and answer (secrets
// redacted); reads and refused requests are not; the log is filtered and paged; the database refuses to rewrite it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminToken } from '../../src/admin/auth.ts';
import { json, post, startTestServer, uniqueId, type TestServer } from '../helpers.ts';
import { administrator } from '../console-helpers.ts';

let server: TestServer;
let otherToken: string;
const tokenName = `audit ${uniqueId()}`;

beforeAll(async () => {
  server = await startTestServer();
  otherToken = await createAdminToken(server.services.db, tokenName);
});
afterAll(async () => {
  await server?.stop();
});

const as = (token: string) => ({ Authorization: `Bearer ${token}` });
const audit = async (query: Record<string, string>, token = server.adminToken) =>
  json(await fetch(`${server.url}/admin/audit?${new URLSearchParams(query)}`, { headers: as(token) }));

describe('the audit log', () => {
  it('records a change with its actor, action, object and answer, secrets redacted', async () => {
    const created = await json(
      await post(
        `${server.url}/admin/marketplaces`,
        { name: 'Audited shop', mode: 'sandbox', sso_redirect_uri: 'https://audited.example/sso' },
        as(otherToken),
      ),
    );
    const { items } = await audit({ object_id: created.id });
    expect(items).toHaveLength(1);
    const [record] = items;
    expect(record).toMatchObject({
      actor: `token:${tokenName}`,
      action: 'createMarketplace',
      object_type: 'marketplace',
      object_id: created.id,
      before: null,
    });
    expect(record.after).toMatchObject({ id: created.id, name: 'Audited shop', secret_key: '[redacted]' });
    expect(JSON.stringify(record)).not.toContain(created.secret_key);
    expect(JSON.stringify(record)).not.toContain(created.sso_client.client_secret);
    expect(Date.parse(record.at)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('does not record reads or refused requests', async () => {
    const before = (await audit({ actor: `token:${tokenName}` })).items.length;
    const refused = await post(`${server.url}/admin/marketplaces`, { name: '', mode: 'sandbox' }, as(otherToken));
    expect(refused.status).toBe(400);
    // A read is no change; the outbox's whole links are the exception (readMail, test/operator-secrets.test.ts).
    const read = await fetch(`${server.url}/admin/marketplaces`, { headers: as(otherToken) });
    expect(read.status).toBe(200);
    expect((await audit({ actor: `token:${tokenName}` })).items.length).toBe(before);
  });

  it('filters by action and pages newest first', async () => {
    const name = `page ${uniqueId()}`;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(
        (
          await json(
            await post(`${server.url}/admin/marketplaces`, { name: `${name} ${i}`, mode: 'sandbox' }, as(otherToken)),
          )
        ).id,
      );
    const first = await audit({ action: 'createMarketplace', actor: `token:${tokenName}`, limit: '2' });
    expect(first.items.map((item: { object_id: string }) => item.object_id)).toEqual([ids[2], ids[1]]);
    expect(first.has_more).toBe(true);
    const second = await audit({
      action: 'createMarketplace',
      actor: `token:${tokenName}`,
      limit: '2',
      starting_after: first.items[1].id,
    });
    expect(second.items[0].object_id).toBe(ids[0]);
    const bad = await fetch(`${server.url}/admin/audit?starting_after=abc`, { headers: as(server.adminToken) });
    expect(bad.status).toBe(400);
    expect((await json(bad)).code).toBe('validation_failed');
  });

  it('is newest first by number, in the JSON and on the console page, across a change in the count of digits', async () => {
    // Ids of 9 and 10 digits (far above the run's own), so that an order of the ids as text would put 9… first.
    const actor = `digits ${uniqueId()}`;
    const low = 900_000_000 + Math.floor(Math.random() * 90_000_000);
    const high = 1_000_000_000 + Math.floor(Math.random() * 90_000_000);
    for (const [id, action] of [
      [low, 'first'],
      [high, 'second'],
      [high + 1, 'third'],
    ] as const)
      await server.services.db.query(
        `INSERT INTO audit_log (id, actor, action, object_type) OVERRIDING SYSTEM VALUE VALUES ($1, $2, $3, 'test')`,
        [id, actor, action],
      );
    const { items } = await audit({ actor });
    expect(items.map((item: { id: string; action: string }) => `${item.id} ${item.action}`)).toEqual([
      `${high + 1} third`,
      `${high} second`,
      `${low} first`,
    ]);
    const operator = await administrator(server, 'support');
    const page = await (
      await fetch(`${server.url}/admin/view/audit?${new URLSearchParams({ actor, lang: 'en' })}`, {
        headers: { Cookie: operator.cookie },
      })
    ).text();
    const rows = [...page.matchAll(/<td>(first|second|third)<\/td>/g)].map((match) => match[1]);
    expect(rows).toEqual(['third', 'second', 'first']);
  });

  it('needs an administrator token', async () => {
    const anonymous = await fetch(`${server.url}/admin/audit`);
    expect(anonymous.status).toBe(401);
  });

  it('cannot be rewritten, even by a query run as the service', async () => {
    // The service's role may only add to it and read it (test/db-roles.test.ts); the owner's trigger refuses the rest.
    const { db } = server.services;
    await expect(db.query("UPDATE audit_log SET actor = 'someone else'")).rejects.toThrow(/permission denied/);
    await expect(db.query('DELETE FROM audit_log')).rejects.toThrow(/permission denied/);
    await expect(db.query('TRUNCATE audit_log')).rejects.toThrow(/permission denied/);
    expect((await db.query('SELECT count(*)::int AS n FROM audit_log')).rows[0].n).toBeGreaterThan(0);
  });
});
