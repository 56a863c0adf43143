// What the money tests share: marketplaces with a fee schedule, deals made, approved and held through the servers as
// a marketplace and a buyer would, and the ledger read back.
import { expect } from 'vitest';
import { createMarketplaceViaApi, postDeal } from './factories.ts';
import { json, post, signInFromInvitation, uniqueId, type TestServer } from './helpers.ts';

export interface Shop {
  id: string;
  key: Record<string, string>;
  public_key: string;
}

export type Posting = {
  id: string;
  at: string;
  deal_id: string;
  kind: string;
  entries: { account: string; amount: number; currency: string }[];
};

export function moneyClient(server: TestServer) {
  const admin = () => ({ Authorization: `Bearer ${server.adminToken}` });
  const api = (path: string) => `${server.url}/api/mkt${path}`;

  const patch = (id: string, body: unknown) =>
    fetch(`${server.url}/admin/marketplaces/${id}`, {
      method: 'PATCH',
      headers: { ...admin(), 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });

  /** A new sandbox marketplace, with these changes (a fee schedule) made by an administrator. */
  async function marketplace(changes?: Record<string, unknown>): Promise<Shop> {
    const made = await createMarketplaceViaApi(server, { name: uniqueId('Money shop') });
    if (changes) expect((await patch(made.id, changes)).status).toBe(200);
    return { id: made.id, key: { 'X-Svc-Key': made.secret_key }, public_key: made.public_key };
  }

  /** The marketplace's deal of these fields (factories.ts's postDeal), whatever the answer. */
  const createDeal = (shop: Shop, fields: Record<string, unknown>) =>
    postDeal(server, { secret_key: shop.key['X-Svc-Key'] }, fields);

  const getDeal = async (shop: Shop, id: string) => json(await fetch(api(`/deals/${id}`), { headers: shop.key }));

  /** A deal the buyer approved and the sandbox holds; `move` releases or refunds it as the buyer. */
  async function heldDeal(shop: Shop, fields: Record<string, unknown>) {
    const { created, body } = await createDeal(shop, fields);
    await fetch(api(`/deals/${created.id}/documents?kind=offer`), {
      method: 'POST',
      headers: shop.key,
      body: Buffer.from('offer'),
    });
    const approval = await json(await post(api(`/deals/${created.id}/approval`), {}, shop.key));
    const buyer = await signInFromInvitation(server, body.buyer_email as string);
    expect((await post(`${server.url}/cabinet/approvals/${approval.id}/approve`, {}, buyer)).status).toBe(200);
    expect((await post(api(`/deals/${created.id}/escrow`), {}, shop.key)).status).toBe(201);
    expect((await getDeal(shop, created.id)).status).toBe('escrow_hold');
    const move = async (action: 'release' | 'refund') => {
      expect((await post(`${server.url}/cabinet/deals/${created.id}/escrow/${action}`, {}, buyer)).status).toBe(200);
      // A release pays the seller out after it answers: read on once the payout is no longer on its way.
      await expect
        .poll(async () => (await getDeal(shop, created.id)).payout.status, { timeout: 20_000 })
        .not.toBe('pending');
    };
    buyers.set(created.id, buyer);
    return { id: created.id as string, move, buyer };
  }
  const buyers = new Map<string, Record<string, string>>();

  /** The buyer of a held deal tries to refund: the answer's status and problem code. */
  async function heldDealRefundAttempt(dealId: string) {
    const response = await post(`${server.url}/cabinet/deals/${dealId}/escrow/refund`, {}, buyers.get(dealId));
    return { status: response.status, code: response.status === 200 ? undefined : (await json(response)).code };
  }

  /** The buyer of a held deal opens a dispute. */
  async function disputeAsBuyer(dealId: string, reason: string) {
    expect(
      (await post(`${server.url}/cabinet/deals/${dealId}/escrow/dispute`, { reason }, buyers.get(dealId))).status,
    ).toBe(200);
  }

  async function ledger(
    shop: Shop,
    query: Record<string, string> = {},
  ): Promise<{ items: Posting[]; has_more: boolean }> {
    const response = await fetch(api(`/ledger?${new URLSearchParams(query)}`), { headers: shop.key });
    expect(response.status).toBe(200);
    return json(response);
  }

  /** The postings of a deal, oldest first, as `kind: account amount, …` lines. */
  async function postingsOf(shop: Shop, dealId: string): Promise<string[]> {
    const { items } = await ledger(shop, { deal_id: dealId });
    return items
      .reverse()
      .map(
        (posting) =>
          `${posting.kind}: ${posting.entries.map((entry) => `${entry.account} ${entry.amount.toFixed(2)}`).join(', ')}`,
      );
  }

  const balance = async (shop: Shop) => json(await fetch(api('/balance'), { headers: shop.key }));

  return {
    admin,
    api,
    patch,
    marketplace,
    createDeal,
    getDeal,
    heldDeal,
    heldDealRefundAttempt,
    disputeAsBuyer,
    ledger,
    postingsOf,
    balance,
  };
}

/** Each posting's entries sum to 0 per currency, in kopecks. */
export function expectBalanced(postings: Posting[]) {
  for (const posting of postings) {
    expect(posting.entries.length).toBeGreaterThanOrEqual(2);
    const totals = new Map<string, number>();
    for (const entry of posting.entries)
      totals.set(entry.currency, (totals.get(entry.currency) ?? 0) + Math.round(entry.amount * 100));
    for (const [currency, total] of totals) expect(total, `${posting.kind} ${posting.id} in ${currency}`).toBe(0);
  }
}
