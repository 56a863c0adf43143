// Idempotency-Key on money-moving requests (src/http/idempotency.ts), over real HTTP against PostgreSQL, Temporal and
// our worker: a retry answers the first attempt's status and body and moves no money twice, another body under the
// key is 409, keys of different callers never meet, and a retry of an attempt that was applied but answered 503 gets
// the applied result (the same Temporal update id), not deal_closed.
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dealInApproval, json, post, startTestServer, uniqueId, type TestServer } from '../helpers.ts';
import { insertHeldDeal } from '../factories.ts';
import { asIdempotentAttempt, idempotencyBase } from '../../src/http/idempotency.ts';
import { moveEscrow } from '../../src/deals/service.ts';

let server: TestServer;
let shopA: Shop;
let shopB: Shop;

type Shop = { id: string; secret_key: string };

beforeAll(async () => {
  server = await startTestServer({ worker: true });
  const admin = { Authorization: `Bearer ${server.adminToken}` };
  shopA = await json(
    await post(`${server.url}/admin/marketplaces`, { name: uniqueId('Idem A'), mode: 'sandbox' }, admin),
  );
  shopB = await json(
    await post(`${server.url}/admin/marketplaces`, { name: uniqueId('Idem B'), mode: 'sandbox' }, admin),
  );
});
afterAll(async () => {
  await server?.stop();
});

const key = (shop: Shop) => ({ 'X-Svc-Key': shop.secret_key });
const api = (path: string) => `${server.url}/api/mkt${path}`;
const admin = () => ({ Authorization: `Bearer ${server.adminToken}` });
const idem = (value: string) => ({ 'Idempotency-Key': value });

/** A deal of the shop approved by its buyer, ready for escrow. */
async function approvedDeal(shop: Shop, amount = 4200) {
  const { dealId, approvalId, buyer } = await dealInApproval(server, shop.secret_key, { amount });
  expect((await post(`${server.url}/cabinet/approvals/${approvalId}/approve`, {}, buyer)).status).toBe(200);
  return { dealId, buyer };
}

const dealOf = async (shop: Shop, dealId: string) => json(await fetch(api(`/deals/${dealId}`), { headers: key(shop) }));

describe('Idempotency-Key', () => {
  it('answers a repeat with the first status and body, moves the money once, and refuses the key for another body', async () => {
    const { dealId } = await approvedDeal(shopA);
    const k = randomUUID();
    const first = await post(api(`/deals/${dealId}/escrow`), { description: 'desk' }, { ...key(shopA), ...idem(k) });
    expect(first.status).toBe(201);
    expect(first.headers.get('Idempotent-Replayed')).toBeNull();
    const firstBody = await first.text();

    const again = await post(api(`/deals/${dealId}/escrow`), { description: 'desk' }, { ...key(shopA), ...idem(k) });
    expect(again.status).toBe(201);
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    expect(await again.text()).toBe(firstBody);

    const deal = await dealOf(shopA, dealId);
    expect(deal.status).toBe('escrow_hold');
    expect(deal.payments).toHaveLength(1);

    const other = await post(api(`/deals/${dealId}/escrow`), { description: 'another' }, { ...key(shopA), ...idem(k) });
    expect(other.status).toBe(409);
    expect((await json(other)).code).toBe('idempotency_key_reused');
    const otherPath = await post(
      api(`/deals/${dealId}/cancel`),
      { description: 'desk' },
      { ...key(shopA), ...idem(k) },
    );
    expect(otherPath.status).toBe(400); // the cancel body has no description: validation first, nothing kept
    const otherPathValid = await post(api(`/deals/${dealId}/cancel`), {}, { ...key(shopA), ...idem(k) });
    expect(otherPathValid.status).toBe(409);
    expect((await json(otherPathValid)).code).toBe('idempotency_key_reused');

    // Without a key a repeat is a new request: refused, the money is held already.
    const plain = await post(api(`/deals/${dealId}/escrow`), { description: 'desk' }, key(shopA));
    expect(plain.status).toBe(400);
    expect((await dealOf(shopA, dealId)).payments).toHaveLength(1);

    // Another marketplace's key of the same text is its own.
    const { dealId: dealB } = await approvedDeal(shopB, 1000);
    const theirs = await post(api(`/deals/${dealB}/escrow`), { description: 'desk' }, { ...key(shopB), ...idem(k) });
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('Idempotent-Replayed')).toBeNull();
    expect((await json(theirs)).amount).toBe(1000);
  });

  it('refuses a bad key with 400 validation_failed naming the header, and keeps nothing', async () => {
    for (const bad of ['x'.repeat(256), 'naïve', 'tab\there']) {
      const response = await post(
        `${server.url}/admin/deals/${randomUUID()}/cancel`,
        {},
        { ...admin(), ...idem(bad) },
      ).catch(() => undefined);
      if (!response) continue; // fetch itself refuses some header values
      expect(response.status).toBe(400);
      const body = await json(response);
      expect(body.code).toBe('validation_failed');
      expect(body.errors[0].path).toBe('Idempotency-Key');
    }
    const empty = await fetch(`${server.url}/admin/deals/${randomUUID()}/cancel`, {
      method: 'POST',
      headers: { ...admin(), 'Idempotency-Key': '' },
    });
    expect(empty.status).toBe(400);
    expect((await json(empty)).errors[0].path).toBe('Idempotency-Key');
  });

  it('runs concurrent duplicates once: one release, the others in use or replayed', async () => {
    const held = await insertHeldDeal(server.services, { holdExpiresAt: new Date(Date.now() + 86_400_000) });
    const k = randomUUID();
    const responses = await Promise.all(
      Array.from({ length: 5 }, () =>
        post(`${server.url}/admin/deals/${held.dealId}/escrow/release`, {}, { ...admin(), ...idem(k) }),
      ),
    );
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((status) => status === 200 || status === 409)).toBe(true);
    for (const response of responses.filter((r) => r.status === 409)) {
      expect(response.headers.get('Retry-After')).toBe('1');
      expect((await json(response)).code).toBe('idempotency_key_in_use');
    }
    const done = await post(`${server.url}/admin/deals/${held.dealId}/escrow/release`, {}, { ...admin(), ...idem(k) });
    expect(done.status).toBe(200);
    expect((await json(done)).status).toBe('released');
    // One move: one deal.paid event.
    const paidEvents = async () =>
      (
        await server.services.db.query(`SELECT 1 FROM webhook_events WHERE deal_id = $1 AND event = 'deal.paid'`, [
          held.dealId,
        ])
      ).rowCount;
    await expect.poll(paidEvents, { timeout: 10_000 }).toBe(1);
  });

  it('answers the applied result to a retry of an attempt that was applied but answered 503, not deal_closed', async () => {
    const held = await insertHeldDeal(server.services, { holdExpiresAt: new Date(Date.now() + 86_400_000) });
    // The administrator's scope, as the service names it: from a first request's row.
    const probe = randomUUID();
    await post(`${server.url}/admin/deals/${randomUUID()}/cancel`, {}, { ...admin(), ...idem(probe) });
    const { scope } = (
      await server.services.db.query<{ scope: string }>('SELECT scope FROM idempotency_keys WHERE key = $1', [probe])
    ).rows[0];

    // The first attempt: its row in progress, its Update applied by the workflow, its answer lost (503 at the deadline).
    const k = randomUUID();
    const path = `/admin/deals/${held.dealId}/escrow/release`;
    const bodySha = createHash('sha256')
      .update(JSON.stringify({ reason: '' }))
      .digest('hex');
    const { created_at } = (
      await server.services.db.query<{ created_at: Date }>(
        `INSERT INTO idempotency_keys (scope, key, method, path, body_sha256, locked_until) VALUES ($1, $2, 'POST', $3, $4, now() + interval '1 hour') RETURNING created_at`,
        [scope, k, path, bodySha],
      )
    ).rows[0];
    const applied = await asIdempotentAttempt({ base: idempotencyBase(scope, k, created_at), retry: false }, () =>
      moveEscrow(server.services, { kind: 'administrator' }, held.dealId, 'release'),
    );
    expect(applied.status).toBe('released');

    // While that attempt holds the key, a retry is told to wait.
    const early = await post(path.replace(/^/, server.url), {}, { ...admin(), ...idem(k) });
    expect(early.status).toBe(409);
    expect((await json(early)).code).toBe('idempotency_key_in_use');

    // The attempt ended without an answer (its lock passed): the retry sends the same Update and gets its outcome.
    await server.services.db.query(`UPDATE idempotency_keys SET locked_until = now() WHERE scope = $1 AND key = $2`, [
      scope,
      k,
    ]);
    const retry = await post(`${server.url}${path}`, {}, { ...admin(), ...idem(k) });
    expect(retry.status).toBe(200);
    expect(await json(retry)).toMatchObject({ id: held.paymentId, status: 'released' });
    const replay = await post(`${server.url}${path}`, {}, { ...admin(), ...idem(k) });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('Idempotent-Replayed')).toBe('true');

    // Without the key the same retry is a new request, refused: what the finding saw.
    const plain = await post(`${server.url}${path}`, {}, admin());
    expect(plain.status).toBe(400);
  });
});
