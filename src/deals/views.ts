// The deal as the API shows it, and the schemas that document it. One shape for marketplaces, cabinet and widget.
import { z } from 'zod';
import { EmailSchema } from '../accounts/users.ts';
import { ProblemSchema } from '../http/api.ts';
import {
  ACTORS,
  DEAL_STATUSES,
  DISPUTE_AUTHORS,
  DOCUMENT_KINDS,
  PAYMENT_STATUSES,
  PAYOUT_STATUSES,
  dealStatus,
  type DealRecord,
  type DealSnapshot,
  type DisputeRecord,
  type PaymentRecord,
} from './model.ts';
import { DEAL_VERBS } from './rules.ts';
import { currencyCode } from './currencies.ts';
import type { DisputeQueueRow } from './store.ts';
import { toMinor, toNumber } from '../money/amount.ts';
import { dealMoneyState } from '../money/deal-money.ts';

/** The largest amount: every amount up to it is a double that still holds its cents exactly (15 significant digits). */
export const MAX_AMOUNT = 1e13;

/**
 * An amount of money: 0 to MAX_AMOUNT with at most two decimals. The cents are checked on the number's shortest
 * decimal form (what JSON.stringify writes), which is exact; zod's own multipleOf(0.01) divides in floating point and
 * near MAX_AMOUNT lets 9999999999999.123 through. The OpenAPI document still says multipleOf 0.01.
 */
export const Money = z
  .number()
  .min(0)
  .max(MAX_AMOUNT, { message: `must be at most ${MAX_AMOUNT} (10^13)` })
  .refine((value) => /^\d+(\.\d{1,2})?$/.test(String(value)), { message: 'must have at most two decimals' })
  .meta({ multipleOf: 0.01 });

/** What a new deal takes for a field its request leaves out. */
export const DEAL_DEFAULTS = {
  title: '',
  buyer_name: '',
  seller_email: '',
  amount: 0,
  currency: 'RUB',
  description: '',
} as const;

/**
 * The request fields of a deal's creation (POST /api/mkt/deals). A field left out stays undefined here, so that a
 * repeat of a creation is compared on the fields it gives (dealConflicts); withDealDefaults fills in the rest for a
 * new deal. The OpenAPI document shows each default (on the inner schema, which is what the document is made from).
 */
export const DealFields = z.object({
  external_id: z.string().min(1).max(128).describe("The marketplace's own deal id; creation is idempotent on it"),
  title: z.string().max(500).meta({ default: DEAL_DEFAULTS.title }).optional(),
  buyer_email: EmailSchema.describe("Drives the automatic creation of the buyer's account"),
  buyer_name: z.string().max(200).meta({ default: DEAL_DEFAULTS.buyer_name }).optional(),
  seller_email: z
    .union([EmailSchema, z.literal('')])
    .meta({ default: DEAL_DEFAULTS.seller_email })
    .optional(),
  amount: Money.meta({ default: DEAL_DEFAULTS.amount }).optional(),
  currency: currencyCode({ default: DEAL_DEFAULTS.currency }).optional(),
  description: z.string().max(5000).meta({ default: DEAL_DEFAULTS.description }).optional(),
});

/**
 * The marketplace's creation (POST /api/mkt/deals): the deal's fields and the fee for this deal. The widget's creation
 * takes the deal's fields only: an anonymous storefront never sets a fee, the marketplace's schedule does.
 */
export const MarketplaceDealFields = DealFields.extend({
  fee: Money.optional().describe(
    "The marketplace's fee for this deal, overriding its fee schedule: 0 ≤ fee < amount (400 validation_failed naming `fee` " +
      'otherwise; a deal of amount 0 takes only 0). Left out: the schedule applied to the amount now. Kept with the deal; ' +
      'a repeat of the creation that gives another fee is 409 deal_conflict.',
  ),
  buyer_locale: z
    .enum(['ru', 'en'])
    .optional()
    .describe(
      "The language of the buyer's mail and pages: an account this deal makes gets it, and an existing one follows it " +
        'unless its person chose a language themselves (their profile or a page while signed in). Left out: Russian ' +
        'for a new account, the language it has for an existing one.',
    ),
  seller_locale: z.enum(['ru', 'en']).optional().describe("The seller's language, as `buyer_locale` is the buyer's"),
});

export type DealInput = z.output<typeof DealFields> & {
  fee?: number;
  buyer_locale?: 'ru' | 'en';
  seller_locale?: 'ru' | 'en';
};

/** The request's fields with the defaults filled in: the deal as it is created. */
export function withDealDefaults(input: DealInput) {
  return {
    external_id: input.external_id,
    title: input.title ?? DEAL_DEFAULTS.title,
    buyer_email: input.buyer_email,
    buyer_name: input.buyer_name ?? DEAL_DEFAULTS.buyer_name,
    seller_email: input.seller_email ?? DEAL_DEFAULTS.seller_email,
    amount: input.amount ?? DEAL_DEFAULTS.amount,
    currency: input.currency ?? DEAL_DEFAULTS.currency,
    description: input.description ?? DEAL_DEFAULTS.description,
    buyer_locale: input.buyer_locale ?? null,
    seller_locale: input.seller_locale ?? null,
  };
}

const EMAIL_FIELDS = new Set(['buyer_email', 'seller_email']);

/**
 * The fields a repeat of a creation gives with other values than the stored deal has, in the schema's order. Fields
 * it leaves out are not compared; e-mail addresses are compared in any case, as accounts are found.
 */
export function dealConflicts(stored: DealRecord, input: DealInput): string[] {
  return (Object.keys(MarketplaceDealFields.shape) as (keyof DealInput)[]).filter((field) => {
    const given = input[field];
    if (given === undefined) return false;
    const kept = field === 'fee' ? (stored.fee ?? 0) : (stored[field] ?? null);
    return EMAIL_FIELDS.has(field) ? String(given).toLowerCase() !== String(kept).toLowerCase() : given !== kept;
  });
}

/** 409 deal_conflict of a creation: the problem details plus the names of the fields that differ. */
export const DealConflictProblem = ProblemSchema.extend({
  fields: z.array(z.string()).describe('The request fields whose values differ from the stored deal'),
}).meta({ title: 'DealConflictProblem' });

export const DealCreated = z.object({ id: z.uuid(), external_id: z.string(), status: z.enum(DEAL_STATUSES) });

export const DocumentView = z.object({
  id: z.uuid(),
  kind: z.enum(DOCUMENT_KINDS),
  name: z.string(),
  content_type: z.string(),
  size: z.number().int(),
  sha256: z.string(),
  created_at: z.iso.datetime(),
});

export const ApprovalView = z.object({
  id: z.uuid(),
  status: z.enum(['pending', 'approved', 'rejected']),
  approver: z.string(),
  comment: z.string(),
  created_at: z.iso.datetime(),
  decided_at: z.iso.datetime().nullable(),
});

export const PaymentView = z.object({
  id: z.uuid(),
  amount: z.number(),
  currency: z.string(),
  provider: z.string(),
  status: z.enum(PAYMENT_STATUSES),
  payment_url: z.string().nullable(),
  hold_expires_at: z.iso.datetime().nullable().describe("When the acquirer's hold lapses"),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});

export const DeliveryView = z
  .object({
    status: z.enum(['none', 'shipped', 'delivered']),
    carrier: z.string(),
    tracking: z.string(),
    shipped_at: z.iso.datetime().nullable(),
    delivered_at: z.iso.datetime().nullable(),
    inspection_ends_at: z.iso
      .datetime()
      .nullable()
      .describe('Until then the buyer may open a dispute; then the money is released automatically'),
  })
  .describe('Shipment, delivery and the buyer’s inspection window');

export const StoredDestinationView = z
  .object({
    type: z.string(),
    title: z.string().describe('Its kind and last four characters'),
    updated_at: z.iso.datetime(),
  })
  .describe('A payout destination as pages show it: the token is never shown');

export const PayoutItemView = z.object({
  id: z.uuid(),
  amount: z.number(),
  status: z.enum(['pending', 'succeeded', 'failed']),
  failure_reason: z.string().nullable(),
  created_at: z.iso.datetime(),
});

export const PayoutView = z
  .object({
    status: z
      .enum(['none', ...PAYOUT_STATUSES])
      .describe('none until the money is released; the deal is paid once it succeeded'),
    destination: z.object({ type: z.string(), title: z.string() }).nullable().describe('Where the latest payout went'),
    items: z.array(PayoutItemView),
  })
  .describe('The payout of the released money to the seller');

export const DisputeView = z
  .object({
    status: z.enum(['open', 'decided']),
    reason: z.string(),
    opened_at: z.iso.datetime(),
    messages: z.array(
      z.object({
        id: z.uuid(),
        author: z.enum(DISPUTE_AUTHORS),
        text: z.string(),
        files: z.array(z.object({ id: z.uuid(), name: z.string(), size: z.number().int() })),
        created_at: z.iso.datetime(),
      }),
    ),
    decision: z
      .object({ outcome: z.enum(['release', 'refund']), reason: z.string(), decided_at: z.iso.datetime() })
      .nullable(),
  })
  .describe('The dispute, once opened: its reason, both sides’ messages with evidence, and the arbiter’s decision');

export const CancellationView = z
  .object({ actor: z.enum(ACTORS), reason: z.string(), cancelled_at: z.iso.datetime() })
  .describe('Who cancelled the deal before payment, and why');

export const DealView = z.object({
  id: z.uuid(),
  external_id: z.string(),
  title: z.string(),
  buyer_email: z.string(),
  buyer_name: z.string(),
  seller_email: z.string(),
  amount: z.number(),
  fee: z.number().describe("The marketplace's fee, fixed when the deal was made (two decimals)"),
  seller_amount: z.number().describe('What the seller gets: amount − fee (two decimals)'),
  currency: z.string(),
  description: z.string(),
  status: z.enum(DEAL_STATUSES),
  documents: z.array(DocumentView),
  approvals: z.array(ApprovalView),
  payments: z.array(PaymentView),
  released_amount: z
    .number()
    .describe("Released to the seller: the seller's part of a released payment (two decimals)"),
  refunded_amount: z.number().describe('Given back to the buyer, in parts or whole (two decimals)'),
  delivery: DeliveryView,
  payout: PayoutView,
  dispute: DisputeView.nullable(),
  cancellation: CancellationView.nullable(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});

export const EscrowResponse = z.object({
  ok: z.literal(true),
  payment_id: z.uuid(),
  amount: z.number(),
  provider: z.string(),
  status: z.enum(PAYMENT_STATUSES),
  payment_url: z.string().optional().describe('The acquirer payment page (live mode)'),
});

export function dealView(snapshot: DealSnapshot): z.infer<typeof DealView> {
  const { deal } = snapshot;
  return {
    id: deal.id,
    external_id: deal.external_id,
    title: deal.title,
    buyer_email: deal.buyer_email,
    buyer_name: deal.buyer_name,
    seller_email: deal.seller_email,
    amount: deal.amount,
    ...dealMoney(deal),
    currency: deal.currency,
    description: deal.description,
    status: dealStatus(snapshot),
    documents: snapshot.documents,
    approvals: snapshot.approvals,
    payments: snapshot.payments.map(paymentView),
    ...dealMoneyState(snapshot),
    delivery: deliveryView(snapshot),
    payout: payoutView(snapshot),
    dispute: snapshot.dispute ? disputeView(snapshot.dispute) : null,
    cancellation: snapshot.cancellation ?? null,
    created_at: deal.created_at,
    updated_at: deal.updated_at,
  };
}

/** The deal's fee and the seller's part, computed exactly in minor units (src/money/amount.ts). */
export function dealMoney(deal: Pick<DealRecord, 'amount' | 'fee'>): { fee: number; seller_amount: number } {
  const amount = toMinor(deal.amount);
  const fee = toMinor(deal.fee ?? 0);
  return { fee: toNumber(fee), seller_amount: toNumber(amount - fee) };
}

/** The dispute as the parties see it: where evidence files are stored stays inside. */
export function disputeView(dispute: DisputeRecord): z.infer<typeof DisputeView> {
  const { opened_by: _opener, ...view } = dispute;
  return {
    ...view,
    messages: dispute.messages.map((message) => ({
      ...message,
      files: message.files.map(({ id, name, size }) => ({ id, name, size })),
    })),
  };
}

export function paymentView(payment: PaymentRecord): z.infer<typeof PaymentView> {
  const {
    provider_payment_id: _internal,
    provider_deal_id: _deal,
    payout_status: _payout,
    released_by: _by,
    release_reason: _why,
    ...view
  } = payment;
  return view;
}

export function deliveryView({ delivery }: Pick<DealSnapshot, 'delivery'>): z.infer<typeof DeliveryView> {
  if (!delivery)
    return {
      status: 'none',
      carrier: '',
      tracking: '',
      shipped_at: null,
      delivered_at: null,
      inspection_ends_at: null,
    };
  const { reminded_at: _reminded, ...view } = delivery;
  return view;
}

export function payoutView({
  payments,
  payouts = [],
}: Pick<DealSnapshot, 'payments' | 'payouts'>): z.infer<typeof PayoutView> {
  const released = payments.find((payment) => payment.status === 'released' && payment.payout_status);
  const latest = payouts.at(-1);
  return {
    status: released?.payout_status ?? 'none',
    destination: latest && latest.destination.title ? latest.destination : null,
    items: payouts.map(({ id, amount, status, failure_reason, created_at }) => ({
      id,
      amount,
      status,
      failure_reason,
      created_at,
    })),
  };
}

export function escrowResponse(payment: PaymentRecord): z.infer<typeof EscrowResponse> {
  return {
    ok: true,
    payment_id: payment.id,
    amount: payment.amount,
    provider: payment.provider,
    status: payment.status,
    ...(payment.payment_url ? { payment_url: payment.payment_url } : {}),
  };
}

// What administrators see besides the deal: its timeline of webhook events, their deliveries, and the disputes queue.

export const DealEventView = z.object({
  type: z.string().describe('deal.<status>'),
  created_at: z.iso.datetime(),
  actor: z.enum(ACTORS).nullable().describe('Who made the change; null in events from before actors were told'),
  reason: z.string().nullable(),
});

export const DealDeliveryView = z.object({
  delivery_id: z.uuid(),
  event: z.string(),
  attempt: z.number().int().describe('0: not attempted yet'),
  status: z.enum(['pending', 'delivered', 'retrying', 'failed', 'skipped']),
  http_status: z.number().int().nullable(),
  error: z.string().nullable(),
  at: z.iso.datetime(),
});

export const AdminDealListItem = DealView.extend({ marketplace_id: z.uuid() });

export const AdminDealView = AdminDealListItem.extend({
  allowed_actions: z.array(z.enum(DEAL_VERBS)).describe('What an administrator may do to the deal now'),
  events: z.array(DealEventView).describe('The webhook events of the deal, oldest first'),
  deliveries: z.array(DealDeliveryView).describe('Every attempt of every webhook delivery of the deal, oldest first'),
  temporal_url: z.url().describe("The deal's workflow in the Temporal Web UI"),
});

export const DisputeQueueItem = z.object({
  deal_id: z.uuid(),
  external_id: z.string(),
  marketplace_id: z.uuid(),
  title: z.string(),
  amount: z.number(),
  currency: z.string(),
  buyer_email: z.string(),
  seller_email: z.string(),
  status: z.enum(['open', 'decided']),
  reason: z.string(),
  opened_at: z.iso.datetime(),
  messages_count: z.number().int(),
  decision: DisputeView.shape.decision,
});

export function adminDealListItem(snapshot: DealSnapshot): z.infer<typeof AdminDealListItem> {
  return { ...dealView(snapshot), marketplace_id: snapshot.deal.marketplace_id };
}

export function disputeQueueItem(item: DisputeQueueRow & { snapshot: DealSnapshot }): z.infer<typeof DisputeQueueItem> {
  const { deal } = item.snapshot;
  return {
    deal_id: deal.id,
    external_id: deal.external_id,
    marketplace_id: deal.marketplace_id,
    title: deal.title,
    amount: deal.amount,
    currency: deal.currency,
    buyer_email: deal.buyer_email,
    seller_email: deal.seller_email,
    status: item.status,
    reason: item.reason,
    opened_at: item.opened_at,
    messages_count: item.messages_count,
    decision: item.snapshot.dispute?.decision ?? null,
  };
}
