// The deal as the API shows it, and the schemas that document it. One shape for marketplaces, cabinet and widget.
import { z } from 'zod';
import { EmailSchema } from '../accounts/users.ts';
import { DEAL_STATUSES, DOCUMENT_KINDS, PAYMENT_STATUSES, dealStatus, type DealSnapshot, type PaymentRecord } from './model.ts';

const money = z
  .number()
  .finite()
  .min(0)
  .max(1e15)
  .refine((value) => Math.abs(Math.round(value * 100) - value * 100) < 1e-6, { message: 'must have at most two decimals' });

/** The deal request fields of SPEC, with their defaults. */
export const DealFields = z.object({
  external_id: z.string().min(1).max(128).describe("The marketplace's own deal id; creation is idempotent on it"),
  title: z.string().max(500).default(''),
  buyer_email: EmailSchema.describe("Drives the automatic creation of the buyer's account"),
  buyer_name: z.string().max(200).default(''),
  seller_email: z.union([EmailSchema, z.literal('')]).default(''),
  amount: money.default(0),
  currency: z
    .string()
    .regex(/^[A-Za-z]{3}$/, 'must be an ISO 4217 code such as RUB')
    .transform((code) => code.toUpperCase())
    .default('RUB'),
  description: z.string().max(5000).default(''),
});

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

export const DealView = z.object({
  id: z.uuid(),
  external_id: z.string(),
  title: z.string(),
  buyer_email: z.string(),
  buyer_name: z.string(),
  seller_email: z.string(),
  amount: z.number(),
  currency: z.string(),
  description: z.string(),
  status: z.enum(DEAL_STATUSES),
  documents: z.array(DocumentView),
  approvals: z.array(ApprovalView),
  payments: z.array(PaymentView),
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
    currency: deal.currency,
    description: deal.description,
    status: dealStatus(snapshot),
    documents: snapshot.documents,
    approvals: snapshot.approvals,
    payments: snapshot.payments.map(paymentView),
    created_at: deal.created_at,
    updated_at: deal.updated_at,
  };
}

export function paymentView(payment: PaymentRecord): z.infer<typeof PaymentView> {
  const { provider_payment_id: _internal, ...view } = payment;
  return view;
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
