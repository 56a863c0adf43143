// The marketplace deal API (`/api/mkt/deals`, X-Svc-Key). A marketplace sees only its own deals (404 otherwise).
import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { notFound, Problem } from '../http/problem.ts';
import { readRawBody } from '../http/body.ts';
import { EmailSchema, ensureUser, personalOrganization } from '../accounts/users.ts';
import { requireSecretKey, type Marketplace } from '../marketplaces/marketplaces.ts';
import { EscrowConfigError, escrowProvider, providerForMode } from '../escrow/providers.ts';
import { addDocumentUpdate, startApprovalUpdate, startEscrowUpdate } from '../../workflows/deal-messages.ts';
import { dealStatus, DOCUMENT_KINDS, isFinal, type DealSnapshot, type DocumentKind } from './model.ts';
import { findDeal, insertDeal, loadSnapshot } from './store.ts';
import { startDealWorkflow, updateDeal } from './commands.ts';
import {
  ApprovalView,
  DealConflictProblem,
  DealCreated,
  DealFields,
  DealView,
  DocumentView,
  EscrowResponse,
  Money,
  dealConflicts,
  dealView,
  escrowResponse,
  withDealDefaults,
  type DealInput,
} from './views.ts';

export const DOCUMENT_LIMIT_BYTES = 25 * 1024 * 1024;

const DealParams = z.object({ deal_id: z.string().describe('The deal id') });

/**
 * Creates the deal (idempotent on external_id) and starts its workflow; shared with the widget. A repeat that gives a
 * field with another value than the stored deal has is 409 deal_conflict naming those fields: the request meant
 * another deal, and answering with the stored one would hide that.
 */
export async function createDeal(services: Services, marketplace: Marketplace, input: DealInput) {
  const { deal, created } = await insertDeal(services.db, { id: randomUUID(), marketplace_id: marketplace.id, ...withDealDefaults(input) });
  const conflicts = created ? [] : dealConflicts(deal, input);
  if (conflicts.length > 0) {
    throw new Problem(
      409,
      'deal_conflict',
      `The external_id ${JSON.stringify(deal.external_id)} already names a deal with other values of: ${conflicts.join(', ')}. ` +
        'Repeat the creation with the stored values, or use a new external_id for a new deal.',
      { extensions: { fields: conflicts } },
    );
  }
  // A new deal has no records yet: one insert and one workflow start make the hot path (DESIGN rule 9).
  const snapshot = created ? { deal, documents: [], approvals: [], payments: [] } : (await loadSnapshot(services.db, deal.id))!;
  // A repeat also (re)starts the workflow: it is a no-op when it runs, and recovers a start that was lost.
  if (created || !isFinal(dealStatus(snapshot))) await startDealWorkflow(services, snapshot);
  return { snapshot, created };
}

/** The marketplace's own deal, or 404 (another marketplace's deal does not exist for it). */
export async function marketplaceDeal(services: Services, ctx: Context, dealId: string): Promise<DealSnapshot> {
  const marketplace = ctx.state.marketplace as Marketplace;
  const snapshot = z.uuid().safeParse(dealId).success ? await loadSnapshot(services.db, dealId) : undefined;
  if (!snapshot || snapshot.deal.marketplace_id !== marketplace.id) throw notFound('No such deal.');
  return snapshot;
}

/**
 * Stores the file in the buyer's cloud first; the workflow records only the reference. When the deal refuses the
 * document (closed, or the update failed as a whole), the file goes again: a refused upload leaves nothing behind.
 */
export async function addDocument(
  services: Services,
  snapshot: DealSnapshot,
  input: { kind: DocumentKind; name: string; contentType: string; bytes: Buffer },
) {
  const { user } = await ensureUser(services.db, { email: snapshot.deal.buyer_email, name: snapshot.deal.buyer_name });
  const organization = (await personalOrganization(services.db, user.id))!;
  const documentId = randomUUID();
  const stored = await services.documents.put({
    organizationId: organization.id,
    documentId,
    bytes: input.bytes,
    contentType: input.contentType,
  });
  try {
    return await updateDeal(services, snapshot, addDocumentUpdate, {
      id: documentId,
      kind: input.kind,
      name: input.name,
      content_type: input.contentType,
      size: stored.size,
      sha256: stored.sha256,
      created_at: new Date().toISOString(),
      organization_id: organization.id,
      storage_key: stored.key,
    });
  } catch (error) {
    // Only a certain refusal (4xx) removes the file: after a timeout (503) the update may still be recorded.
    if (error instanceof Problem && error.status < 500) {
      await services.documents.remove(stored.key).catch((removal: unknown) => {
        services.logger.error({ err: removal, storage_key: stored.key }, 'could not remove a refused document');
      });
    }
    throw error;
  }
}

/** Starts escrow through the marketplace's acquirer; 201 for a new payment, 200 for the pending one. */
export async function startEscrow(services: Services, snapshot: DealSnapshot, mode: Marketplace['mode'], amount: number, description: string) {
  const provider = providerForMode(mode);
  let holdLimitSeconds: number;
  try {
    holdLimitSeconds = escrowProvider(provider, services.config).holdLimitSeconds;
  } catch (error) {
    if (!(error instanceof EscrowConfigError)) throw error;
    throw new Problem(503, 'acquirer_not_configured', `Live escrow is not configured on this service: ${error.message}`);
  }
  return updateDeal(services, snapshot, startEscrowUpdate, {
    amount,
    description,
    provider,
    // The buyer's deal page in the cabinet, where the acquirer sends them back after paying.
    return_url: `${services.config.BASE_URL}/cabinet/view/deals/${snapshot.deal.id}`,
    hold_limit_seconds: holdLimitSeconds,
  });
}

export function dealRoutes(api: Api, services: Services): void {
  const auth = requireSecretKey(services.db);
  const common = { tags: ['Deals'], security: ['marketplaceKey'], use: [auth] };

  api.route({
    ...common,
    method: 'post',
    path: '/api/mkt/deals',
    operationId: 'createDeal',
    summary: 'Register a deal (idempotent on external_id)',
    description: 'The buyer and the seller get a svc ID and a personal organization when they have none, and an invitation.',
    body: DealFields,
    responses: {
      201: { description: 'A new deal', schema: DealCreated },
      200: { description: 'The deal this external_id already names, unchanged: the request gave no field another value', schema: DealCreated },
      409: {
        description: 'deal_conflict: this external_id names a deal with other values of the fields in `fields`',
        contentType: 'application/problem+json',
        schema: DealConflictProblem,
      },
    },
    handler: async (ctx, { body }) => {
      const { snapshot, created } = await createDeal(services, ctx.state.marketplace, body);
      ctx.status = created ? 201 : 200;
      ctx.body = { id: snapshot.deal.id, external_id: snapshot.deal.external_id, status: dealStatus(snapshot) };
    },
  });

  api.route({
    ...common,
    method: 'get',
    path: '/api/mkt/deals',
    operationId: 'findDealByExternalId',
    summary: 'Find a deal by its external_id',
    query: z.object({ external_id: z.string().min(1).max(128) }),
    responses: { 200: { description: 'The full deal state', schema: DealView } },
    handler: async (ctx, { query }) => {
      const marketplace = ctx.state.marketplace as Marketplace;
      const deal = await findDeal(services.db, { marketplaceId: marketplace.id, externalId: query.external_id });
      if (!deal) throw notFound(`No deal has external_id ${JSON.stringify(query.external_id)}.`);
      ctx.body = dealView((await loadSnapshot(services.db, deal.id))!);
    },
  });

  api.route({
    ...common,
    method: 'get',
    path: '/api/mkt/deals/{deal_id}',
    operationId: 'getDeal',
    summary: 'The full deal state',
    params: DealParams,
    responses: { 200: { description: 'The deal', schema: DealView } },
    handler: async (ctx, { params }) => {
      ctx.body = dealView(await marketplaceDeal(services, ctx, params.deal_id));
    },
  });

  api.route({
    ...common,
    method: 'post',
    path: '/api/mkt/deals/{deal_id}/documents',
    operationId: 'addDocument',
    summary: "Attach a document; it is stored in the buyer's cloud",
    params: DealParams,
    query: z.object({
      kind: z.enum(DOCUMENT_KINDS),
      name: z.string().trim().min(1).max(255).optional().describe('Defaults to the kind'),
    }),
    rawBody: { contentType: '*/*', description: `The file, up to ${DOCUMENT_LIMIT_BYTES / 1024 / 1024} MiB; its type from Content-Type` },
    responses: { 201: { description: 'The document', schema: DocumentView } },
    handler: async (ctx, { params, query }) => {
      const snapshot = await marketplaceDeal(services, ctx, params.deal_id);
      const bytes = await readRawBody(ctx, DOCUMENT_LIMIT_BYTES);
      if (bytes.length === 0) throw new Problem(400, 'empty_document', 'The body is empty; send the file as the request body.');
      ctx.status = 201;
      ctx.body = await addDocument(services, snapshot, {
        kind: query.kind,
        name: query.name ?? query.kind,
        contentType: ctx.get('Content-Type') || 'application/octet-stream',
        bytes,
      });
    },
  });

  api.route({
    ...common,
    method: 'post',
    path: '/api/mkt/deals/{deal_id}/approval',
    operationId: 'startApproval',
    summary: "Start the buyer's approval",
    params: DealParams,
    body: z.object({
      approver_email: z.union([EmailSchema, z.literal('')]).default('').describe('Defaults to the buyer'),
      comment: z.string().max(2000).default(''),
    }),
    responses: {
      201: { description: 'The approval started', schema: ApprovalView },
      200: { description: 'The approval already pending', schema: ApprovalView },
    },
    handler: async (ctx, { params, body }) => {
      const snapshot = await marketplaceDeal(services, ctx, params.deal_id);
      const { approval, created } = await updateDeal(services, snapshot, startApprovalUpdate, {
        approver: body.approver_email || snapshot.deal.buyer_email,
        comment: body.comment,
      });
      ctx.status = created ? 201 : 200;
      ctx.body = approval;
    },
  });

  api.route({
    ...common,
    method: 'post',
    path: '/api/mkt/deals/{deal_id}/escrow',
    operationId: 'startEscrow',
    summary: 'Hold the money in escrow (the deal must be approved)',
    params: DealParams,
    body: z.object({
      amount: Money.describe('0 or absent: the deal amount').default(0),
      description: z.string().max(128).default(''),
    }),
    responses: {
      201: { description: 'A new payment: held at once (sandbox) or pending with payment_url (live)', schema: EscrowResponse },
      200: { description: 'The live payment still pending', schema: EscrowResponse },
    },
    handler: async (ctx, { params, body }) => {
      const snapshot = await marketplaceDeal(services, ctx, params.deal_id);
      if (body.amount > snapshot.deal.amount) {
        throw new Problem(400, 'amount_exceeds_deal', `The amount is more than the deal amount ${snapshot.deal.amount}.`);
      }
      const mode = (ctx.state.marketplace as Marketplace).mode;
      const { payment, created } = await startEscrow(services, snapshot, mode, body.amount, body.description);
      ctx.status = created ? 201 : 200;
      ctx.body = escrowResponse(payment);
    },
  });
}
