// Records written straight into PostgreSQL, as the deal workflow would have left them, for tests that start a workflow
// at a given step instead of playing every request before it. The store (src/deals/store.ts) reads them back.
import { createHash, randomUUID } from 'node:crypto';
import type { Services } from '../src/services.ts';
import { ensureUser } from '../src/accounts/users.ts';
import { saveWebhookEndpoint } from '../src/webhooks/endpoints.ts';
import { uniqueEmail, uniqueId } from './helpers.ts';

export interface HeldDeal {
  marketplaceId: string;
  dealId: string;
  externalId: string;
  buyerEmail: string;
  paymentId: string;
  /** When the acquirer's hold lapses (ISO 8601). */
  holdExpiresAt: string;
}

/**
 * A sandbox marketplace (with a webhook endpoint when `webhookUrl` is given), or the given one, and one of its deals
 * in `escrow_hold`: an offer, the buyer's approval and a sandbox payment held until `holdExpiresAt`.
 */
export async function insertHeldDeal(
  services: Pick<Services, 'db' | 'masterKey'>,
  options: { holdExpiresAt: Date; amount?: number; webhookUrl?: string; marketplaceId?: string },
): Promise<HeldDeal> {
  const { db } = services;
  const amount = options.amount ?? 2500;
  const marketplaceId =
    options.marketplaceId ??
    (
      await db.query<{ id: string }>(`INSERT INTO marketplaces (name, mode) VALUES ($1, 'sandbox') RETURNING id`, [
        uniqueId('Shop'),
      ])
    ).rows[0].id;
  if (options.webhookUrl) await saveWebhookEndpoint(db, services.masterKey, marketplaceId, options.webhookUrl);
  // The buyer's documents live in the buyer's personal organization.
  const buyerEmail = uniqueEmail('buyer');
  const { user: buyer } = await ensureUser(db, { email: buyerEmail });
  const organization = await db.query<{ id: string }>('SELECT id FROM organizations WHERE owner_id = $1 AND personal', [
    buyer.id,
  ]);

  const dealId = randomUUID();
  const externalId = uniqueId('order');
  const paymentId = randomUUID();
  const holdExpiresAt = options.holdExpiresAt.toISOString();
  await db.query(
    `INSERT INTO deals (id, marketplace_id, external_id, title, buyer_email, amount, currency, status, buyer_id)
     VALUES ($1, $2, $3, 'Sofa', $4, $5, 'RUB', 'escrow_hold', $6)`,
    [dealId, marketplaceId, externalId, buyerEmail, amount, buyer.id],
  );
  const offer = Buffer.from('offer');
  await db.query(
    `INSERT INTO deal_documents (id, deal_id, organization_id, kind, name, content_type, size, sha256, storage_key)
     VALUES ($1, $2, $3, 'offer', 'offer.pdf', 'application/pdf', $4, $5, $6)`,
    [
      randomUUID(),
      dealId,
      organization.rows[0].id,
      offer.length,
      createHash('sha256').update(offer).digest('hex'),
      `factory/${dealId}/offer`,
    ],
  );
  await db.query(
    `INSERT INTO deal_approvals (id, deal_id, status, approver, decided_at) VALUES ($1, $2, 'approved', $3, now())`,
    [randomUUID(), dealId, buyerEmail],
  );
  // The sandbox acquirer knows its payments by this prefix (src/escrow/sandbox.ts).
  await db.query(
    `INSERT INTO deal_payments (id, deal_id, amount, currency, provider, status, provider_payment_id, hold_expires_at)
     VALUES ($1, $2, $3, 'RUB', 'sandbox', 'hold', $4, $5)`,
    [paymentId, dealId, amount, `sandbox_${paymentId}`, holdExpiresAt],
  );
  return { marketplaceId, dealId, externalId, buyerEmail, paymentId, holdExpiresAt };
}
