// The deal as the widget shows it to the buyer: no storage details, no approver addresses, no internal ids of the
// acquirer; plus where the buyer's cabinet is.
import { z } from 'zod';
import { DEAL_STATUSES, DOCUMENT_KINDS, PAYMENT_STATUSES, dealStatus, type DealSnapshot } from '../deals/model.ts';
import { DealCreated } from '../deals/views.ts';

export const WidgetDealCreated = DealCreated.extend({
  widget_token: z.string().describe('JWT for X-Svc-Widget-Token (or the wt query); for this deal only'),
  expires_at: z.iso
    .datetime()
    .describe('When the token stops working; repeat the creation (or the lookup) for a fresh one'),
  invitation_sent: z
    .boolean()
    .describe(
      'Whether this creation queued a mail about the deal to the buyer (an invitation for a new account, a new-deal mail for ' +
        'a known one, so the answer is the same for both): true for a new deal unless the address was named by too many ' +
        'widget creations within the hour; false for a repeat and a lookup.',
    ),
});

export const WidgetDeal = z.object({
  id: z.uuid(),
  external_id: z.string(),
  title: z.string(),
  buyer_email: z.string(),
  amount: z.number(),
  currency: z.string(),
  description: z.string(),
  status: z.enum(DEAL_STATUSES),
  documents: z.array(z.object({ id: z.uuid(), kind: z.enum(DOCUMENT_KINDS), name: z.string() })),
  approvals: z.array(
    z.object({
      id: z.uuid(),
      status: z.enum(['pending', 'approved', 'rejected']),
      decided_at: z.iso.datetime().nullable(),
    }),
  ),
  payments: z.array(
    z.object({
      id: z.uuid(),
      amount: z.number(),
      currency: z.string(),
      status: z.enum(PAYMENT_STATUSES),
      payment_url: z.string().nullable(),
    }),
  ),
  cabinet_url: z
    .string()
    .describe("The deal's page in the buyer cabinet, where the buyer approves and moves the escrow"),
  contract_url: z
    .string()
    .nullable()
    .describe("The deal's documents in the buyer cabinet (the contract among them), or null while the deal has none"),
  mode: z
    .enum(['sandbox', 'live'])
    .describe("The marketplace's mode: a sandbox deal's payment holds no real money, and the widget says so"),
});

export function widgetDeal(
  snapshot: DealSnapshot,
  baseUrl: string,
  mode: 'sandbox' | 'live',
): z.infer<typeof WidgetDeal> {
  const { deal } = snapshot;
  const cabinetUrl = `${baseUrl}/cabinet/view/deals/${deal.id}`;
  return {
    id: deal.id,
    external_id: deal.external_id,
    title: deal.title,
    buyer_email: deal.buyer_email,
    amount: deal.amount,
    currency: deal.currency,
    description: deal.description,
    status: dealStatus(snapshot),
    documents: snapshot.documents.map(({ id, kind, name }) => ({ id, kind, name })),
    approvals: snapshot.approvals.map(({ id, status, decided_at }) => ({ id, status, decided_at })),
    payments: snapshot.payments.map(({ id, amount, currency, status, payment_url }) => ({
      id,
      amount,
      currency,
      status,
      payment_url,
    })),
    cabinet_url: cabinetUrl,
    // Documents are the buyer's: they open in the cabinet, where the buyer is signed in, never through the widget token.
    contract_url: snapshot.documents.length > 0 ? `${cabinetUrl}#documents` : null,
    mode,
  };
}
