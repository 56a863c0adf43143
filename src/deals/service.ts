// A deal's verbs, whoever asks: the marketplace's API, its widget, the buyer and the seller in the cabinet, and the
// administrators. Each verb first loads the deal through one access policy (dealFor: another party's deal does not
// exist, 404; a verb outside the party's role, roleMay, 404 too), then asks the deal's workflow, its only writer, which
// applies the rules of src/deals/rules.ts with the caller's role to the deal as it is when the change happens: in the
// update's validator, then again in its handler under the deal's lock (docs/architecture.md#verbs-and-rules). Nothing
// here decides a rule from what it read: that read may be older than a change the workflow applied in between, and
// PostgreSQL may not have a write yet.
import { randomUUID } from 'node:crypto';
import type { Services } from '../services.ts';
import { isUuid } from '../uuid.ts';
import { webhookBody } from '../webhooks/events.ts';
import { notFound, Problem, problem } from '../http/problem.ts';
import { ensureUser, findMailRecipient, personalOrganization, type User } from '../accounts/users.ts';
import { findMarketplace, type Marketplace, type RememberedKey } from '../marketplaces/marketplaces.ts';
import { EscrowConfigError, escrowProvider, PROVIDER_CURRENCIES, providerFor } from '../escrow/providers.ts';
import { invitationToken, renewInvitation } from '../accounts/tokens.ts';
import { dealMail, dealPageUrl, invitationMail } from '../mail/templates.ts';
import {
  addDocumentUpdate,
  cancelUpdate,
  continueUpdate,
  decideUpdate,
  deliverUpdate,
  disputeMessageUpdate,
  partialRefundUpdate,
  payoutDestinationSignal,
  shipUpdate,
  movePaymentUpdate,
  startApprovalUpdate,
  startEscrowUpdate,
  type MovePaymentInput,
} from '../../workflows/deals/deal-messages.ts';
import {
  dealStatus,
  dealWorkflowId,
  isFinal,
  type DealRecord,
  type DealSnapshot,
  type DisputeAuthor,
  type DisputeFile,
  type DocumentKind,
} from './model.ts';
import { allowedActions, roleMay, type DealRole, type DealVerb, type PaymentAction } from './rules.ts';
import {
  approvalsOfPerson,
  dealFile,
  dealOfApproval,
  dealsOfPerson,
  insertDeal,
  listDeals,
  loadSnapshot,
  marketplaceHasDeal,
  countInvitationResend,
  dealDeliveries,
  dealEvents,
  findDeal,
  hasDispute,
  listDisputes,
  type DealListFilter,
} from './store.ts';
import { signalDeal, startDealWorkflow, updateDeal } from './commands.ts';
import { idempotentUuid } from '../http/idempotency.ts';
import {
  destinationRefusal,
  setDealDestination,
  setSellerDestination,
  type PayoutDestinationInput,
} from '../money/destinations.ts';
import { formatMinor, toMinor } from '../money/amount.ts';
import { feeRefusal, scheduledFee } from '../money/fee.ts';
import { DEAL_DEFAULTS, dealConflicts, withDealDefaults, type DealInput } from './views.ts';

/** Who asks. A person's part in a deal (buyer, seller, approver) is found from the deal. */
export type DealActor =
  | { kind: 'marketplace'; marketplace: Marketplace }
  | { kind: 'widget'; marketplace: Marketplace }
  | { kind: 'person'; user: User }
  | { kind: 'administrator' };

export interface DealInContext {
  snapshot: DealSnapshot;
  role: DealRole;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** A person's part in the deal, or undefined when they have none. */
function personRole(snapshot: DealSnapshot, user: User): DealRole | undefined {
  if (same(snapshot.deal.buyer_email, user.email)) return 'buyer';
  if (snapshot.deal.seller_email && same(snapshot.deal.seller_email, user.email)) return 'seller';
  if (snapshot.approvals.some((approval) => same(approval.approver, user.email))) return 'approver';
  return undefined;
}

/** The actor's place in a loaded deal, or undefined when the deal is not theirs to see. */
export function roleIn(snapshot: DealSnapshot, actor: DealActor): DealRole | undefined {
  switch (actor.kind) {
    case 'marketplace':
    case 'widget':
      return snapshot.deal.marketplace_id === actor.marketplace.id ? actor.kind : undefined;
    case 'person':
      return personRole(snapshot, actor.user);
    case 'administrator':
      return 'administrator';
  }
}

/** The one access policy: the deal with the actor's role in it, or 404 for a deal that is not theirs. */
export async function dealFor(services: Services, actor: DealActor, dealId: string): Promise<DealInContext> {
  const snapshot = isUuid(dealId) ? await loadSnapshot(services.db, dealId) : undefined;
  const role = snapshot && roleIn(snapshot, actor);
  if (!snapshot || !role) throw notFound('No such deal.');
  return { snapshot, role };
}

/** The verbs the actor may use on the deal now (an approver other than the buyer decides only their own approval). */
export function actionsFor(snapshot: DealSnapshot, role: DealRole, actor: DealActor): DealVerb[] {
  const pending = snapshot.approvals.find((approval) => approval.status === 'pending');
  return allowedActions(snapshot, role).filter(
    (verb) =>
      verb !== 'decide_approval' ||
      (actor.kind === 'person' && pending !== undefined && same(pending.approver, actor.user.email)),
  );
}

/** Loads the deal for the verb: 404 when the actor's role has no such verb. */
async function dealForVerb(
  services: Services,
  actor: DealActor,
  dealId: string,
  verb: DealVerb,
): Promise<DealInContext> {
  const found = await dealFor(services, actor, dealId);
  if (!roleMay(found.role, verb)) throw notFound('No such deal.');
  return found;
}

/**
 * Creates the deal (idempotent on external_id) and starts its workflow. A repeat that gives a field with another
 * value than the stored deal has is 409 deal_conflict naming those fields: the request meant another deal, and
 * answering with the stored one would hide that.
 *
 * With `key`, the marketplace is the one this process remembers for the request's secret key (RememberedKey): the
 * insert checks the key in its own statement, and a refusal decided from that marketplace (currency, fee) stands only
 * once PostgreSQL confirmed it. When the key no longer works that is 401; when the marketplace changed since it was
 * read, the creation is made again from the marketplace as it is now.
 */
export async function createDeal(
  services: Services,
  marketplace: Marketplace,
  input: DealInput,
  key?: RememberedKey,
): Promise<{ snapshot: DealSnapshot; created: boolean }> {
  let fields: ReturnType<typeof withDealDefaults>;
  let fee: string;
  try {
    refuseCurrency(marketplace, input.currency ?? DEAL_DEFAULTS.currency);
    fields = withDealDefaults(input);
    fee = dealFee(marketplace, fields.amount, input.fee);
  } catch (error) {
    if (!key || key.confirmed) throw error;
    const now = await key.confirm();
    if (!now.changed) throw error;
    return createDeal(services, now.marketplace, input);
  }
  // deal.created is written with the deal, so it is told before any later change; the outbox sends it.
  const inserted = await insertDeal(
    services.db,
    { id: randomUUID(), marketplace_id: marketplace.id, ...fields, fee, fee_moment: marketplace.fee_moment },
    (deal) => {
      const told = {
        eventId: randomUUID(),
        deliveryId: randomUUID(),
        taskQueue: services.config.TEMPORAL_TASK_QUEUE,
        event: 'deal.created',
        occurredAt: deal.created_at,
        status: 'created',
        actor: 'marketplace' as const,
        deal,
      };
      return { ...told, body: webhookBody(told) };
    },
    key,
  );
  if (!inserted) return createDeal(services, (await key!.confirm()).marketplace, input);
  if (key) key.confirmed = true;
  const { deal, created } = inserted;
  if (!created) refuseConflicts(deal, input);
  // A new deal has no records yet: one insert and one workflow start make the hot path
  // (docs/decisions/0005-creation-is-one-insert-and-one-start.md).
  const snapshot = created
    ? { deal, version: 0, documents: [], approvals: [], payments: [], dispute: null, cancellation: null }
    : (await loadSnapshot(services.db, deal.id))!;
  // A repeat also (re)starts the workflow: it is a no-op when it runs, and recovers a start that was lost.
  if (created || !isFinal(dealStatus(snapshot))) await startDealWorkflow(services, snapshot);
  return { snapshot, created };
}

/**
 * The deal's fee as decimal text, fixed now: the one the marketplace gives (0 ≤ fee < amount, 400 validation_failed
 * naming `fee` otherwise), or its fee schedule applied to the amount (src/money/fee.ts). A repeat of a creation
 * computes it too, and keeps the stored deal's.
 */
function dealFee(marketplace: Marketplace, amount: number, given: number | undefined): string {
  const minor = toMinor(amount);
  if (given === undefined) return formatMinor(scheduledFee(minor, marketplace.fee_schedule));
  const refused = feeRefusal(minor, toMinor(given));
  if (refused)
    throw problem('validation_failed', `The request body is invalid: fee: ${refused}`, {
      errors: [{ path: 'fee', message: refused }],
    });
  return formatMinor(toMinor(given));
}

/**
 * 400 validation_failed naming `currency` when the marketplace's acquirer cannot take it: a live marketplace's deals are
 * paid through YooKassa, in roubles. A sandbox marketplace takes any ISO 4217 code (the schema's list).
 */
function refuseCurrency(marketplace: Marketplace, currency: string): void {
  const takes = PROVIDER_CURRENCIES[providerFor(marketplace)];
  if (takes.includes(currency)) return;
  const message = `must be one of ${takes.join(', ')}: a ${marketplace.mode} marketplace's deals are paid through ${providerFor(marketplace)}, which takes no ${currency}`;
  throw problem('validation_failed', `The request body is invalid: currency: ${message}`, {
    errors: [{ path: 'currency', message }],
  });
}

/** 409 deal_conflict naming the fields the input gives with other values than the stored deal has, if any. */
export function refuseConflicts(deal: DealRecord, input: DealInput): void {
  const conflicts = dealConflicts(deal, input);
  if (conflicts.length === 0) return;
  throw problem(
    'deal_conflict',
    `The external_id ${JSON.stringify(deal.external_id)} already names a deal with other values of: ${conflicts.join(', ')}. ` +
      'Repeat the creation with the stored values, or use a new external_id for a new deal.',
    { extensions: { fields: conflicts } },
  );
}

/** A page of the marketplace's deals; a cursor naming a deal that is not its own is 400. */
export async function marketplaceDeals(
  services: Services,
  marketplace: Marketplace,
  filter: Omit<DealListFilter, 'marketplaceId'>,
) {
  if (
    filter.startingAfter &&
    !(isUuid(filter.startingAfter) && (await marketplaceHasDeal(services.db, marketplace.id, filter.startingAfter)))
  ) {
    throw problem(
      'invalid_cursor',
      'starting_after must be the id of one of your deals, as a previous page listed it.',
    );
  }
  return listDeals(services.db, { ...filter, marketplaceId: marketplace.id });
}

/**
 * Stores the file in the buyer's cloud first; the workflow records only the reference. When the deal refuses the
 * document (closed, or the update failed as a whole), the file goes again: a refused upload leaves nothing behind.
 */
export async function addDocument(
  services: Services,
  actor: DealActor,
  dealId: string,
  input: { kind: DocumentKind; name: string; contentType: string; bytes: Buffer },
) {
  const { snapshot } = await dealForVerb(services, actor, dealId, 'add_document');
  const { user } = await ensureUser(services.db, { email: snapshot.deal.buyer_email, name: snapshot.deal.buyer_name });
  const organization = (await personalOrganization(services.db, user.id))!;
  const documentId = randomUUID();
  const stored = await services.documents.put({
    organizationId: organization.id,
    documentId,
    bytes: input.bytes,
    contentType: input.contentType,
  });
  return withFileRemovedOnRefusal(services, [stored.key], () =>
    updateDeal(services, snapshot, addDocumentUpdate, {
      id: documentId,
      kind: input.kind,
      name: input.name,
      content_type: input.contentType,
      size: stored.size,
      sha256: stored.sha256,
      created_at: new Date().toISOString(),
      organization_id: organization.id,
      storage_key: stored.key,
    }),
  );
}

/** Runs the change; when the deal refuses it for certain (4xx), the files stored for it go again. */
async function withFileRemovedOnRefusal<T>(services: Services, keys: string[], change: () => Promise<T>): Promise<T> {
  try {
    return await change();
  } catch (error) {
    // Only a certain refusal removes the files: after a timeout (503) the update may still be recorded.
    if (error instanceof Problem && error.status < 500) {
      for (const key of keys) {
        await services.documents.remove(key).catch((removal: unknown) => {
          services.logger.error({ err: removal, storage_key: key }, 'could not remove a refused file');
        });
      }
    }
    throw error;
  }
}

export async function startApproval(
  services: Services,
  actor: DealActor,
  dealId: string,
  input: { approver: string; comment: string },
) {
  const { snapshot } = await dealForVerb(services, actor, dealId, 'start_approval');
  return updateDeal(services, snapshot, startApprovalUpdate, {
    approver: input.approver || snapshot.deal.buyer_email,
    comment: input.comment,
  });
}

/** Starts escrow through the marketplace's acquirer; `created` false for the live payment still pending. */
export async function startEscrow(
  services: Services,
  actor: DealActor & { marketplace: Marketplace },
  dealId: string,
  input: { amount: number; description: string },
) {
  const { snapshot } = await dealForVerb(services, actor, dealId, 'start_escrow');
  return holdInEscrow(services, snapshot, actor.marketplace, input);
}

/**
 * The buyer pays from the cabinet: escrow for the deal's full amount through its marketplace's acquirer, the same path
 * as the marketplace's escrow and the widget's Pay. Live: a payment pending on the acquirer's page, which sends the
 * buyer back to the deal's cabinet page; the one still pending is answered again, never made twice. Sandbox: held at
 * once, a test. Only the buyer has the verb (anyone else: 404); the workflow applies the rules' `pay` when it pays.
 */
export async function payDeal(services: Services, actor: DealActor & { kind: 'person' }, dealId: string) {
  const { snapshot, role } = await dealForVerb(services, actor, dealId, 'pay');
  const marketplace = await findMarketplace(services.db, snapshot.deal.marketplace_id);
  if (!marketplace) throw notFound('No such deal.');
  const { payment, created } = await holdInEscrow(services, snapshot, marketplace, {
    amount: 0,
    description: '',
    payer: 'buyer',
  });
  const after = (await loadSnapshot(services.db, dealId))!;
  return { payment, created, snapshot: after, role, actions: actionsFor(after, role, actor) };
}

/** Escrow through the marketplace's acquirer, as the workflow takes it: amount 0 is the deal's amount. */
async function holdInEscrow(
  services: Services,
  snapshot: DealSnapshot,
  marketplace: Marketplace,
  input: { amount: number; description: string; payer?: 'buyer' },
) {
  if (input.amount > snapshot.deal.amount) {
    throw problem('amount_exceeds_deal', `The amount is more than the deal amount ${snapshot.deal.amount}.`);
  }
  const provider = providerFor(marketplace);
  // A deal made while the marketplace was in sandbox mode may be in a currency its live acquirer does not take.
  if (!PROVIDER_CURRENCIES[provider].includes(snapshot.deal.currency)) {
    throw problem(
      'currency_not_supported',
      `The deal is in ${snapshot.deal.currency}, and this marketplace's acquirer (${provider}) takes only ${PROVIDER_CURRENCIES[provider].join(', ')}.`,
    );
  }
  let holdLimitSeconds: number;
  try {
    holdLimitSeconds = escrowProvider(provider, services.config).holdLimitSeconds;
  } catch (error) {
    if (!(error instanceof EscrowConfigError)) throw error;
    throw problem('acquirer_not_configured', `Live escrow is not configured on this service: ${error.message}`);
  }
  return updateDeal(services, snapshot, startEscrowUpdate, {
    amount: input.amount,
    description: input.description,
    provider,
    // The buyer's deal page in the cabinet, where the acquirer sends them back after paying.
    return_url: `${services.config.BASE_URL}/cabinet/view/deals/${snapshot.deal.id}`,
    hold_limit_seconds: holdLimitSeconds,
    ...(input.payer ? { payer: input.payer } : {}),
  });
}

/** The widget's Continue: a contract when the deal has none, then the buyer's approval. */
export async function continueDeal(
  services: Services,
  actor: DealActor & { kind: 'widget' },
  dealId: string,
  locale: 'ru' | 'en',
) {
  const { snapshot } = await dealFor(services, actor, dealId);
  await updateDeal(services, snapshot, continueUpdate, { marketplace_name: actor.marketplace.name, locale });
  return (await loadSnapshot(services.db, dealId))!;
}

/** The approver's decision; anyone else's approval does not exist for them (404). */
export async function decideApproval(
  services: Services,
  user: User,
  approvalId: string,
  decision: 'approve' | 'reject',
  comment: string,
) {
  const dealId = isUuid(approvalId) ? await dealOfApproval(services.db, approvalId) : undefined;
  const found = dealId ? await dealFor(services, { kind: 'person', user }, dealId).catch(() => undefined) : undefined;
  const approval = found?.snapshot.approvals.find((candidate) => candidate.id === approvalId);
  if (!found || !approval || !same(approval.approver, user.email)) throw notFound('No such approval.');
  return updateDeal(services, found.snapshot, decideUpdate, {
    approval_id: approvalId,
    decision,
    comment,
    actor: user.email,
  });
}

/**
 * Release, refund or dispute: the buyer, or an administrator on any deal. A dispute needs a reason. An administrator's
 * move here is never the arbiter's decision, whatever the payment was when the request read it: the workflow refuses
 * any move of a disputed payment but the arbiter's (400 dispute_open), at the moment it would apply it.
 */
export async function moveEscrow(
  services: Services,
  actor: DealActor,
  dealId: string,
  action: PaymentAction,
  reason = '',
) {
  const { snapshot, role } = await dealForVerb(services, actor, dealId, action);
  if (action === 'dispute' && !reason.trim()) throw problem('reason_required', 'Say why you open the dispute.');
  const mover: MovePaymentInput['actor'] = role === 'buyer' ? 'buyer' : 'administrator';
  return updateDeal(services, snapshot, movePaymentUpdate, {
    action,
    actor: mover,
    reason: reason.trim() || undefined,
  });
}

/**
 * The arbiter's decision on a dispute: release to the seller or refund the buyer, with the reason both sides read. The
 * workflow takes it only while the payment is disputed (400 invalid_payment_state otherwise), checked when it applies it.
 */
export async function resolveDispute(
  services: Services,
  dealId: string,
  outcome: 'release' | 'refund' | 'split',
  reason: string,
  split?: { release_amount: number; refund_amount: number },
) {
  const { snapshot } = await dealForVerb(services, { kind: 'administrator' }, dealId, 'resolve');
  if (!reason.trim()) throw problem('reason_required', 'Write the reason for the decision; both sides will read it.');
  if (outcome === 'split') {
    if (!split) throw problem('invalid_refund_amount', 'A split names release_amount and refund_amount.');
    const refund_id = idempotentUuid('split-refund');
    return updateDeal(services, snapshot, movePaymentUpdate, {
      action: 'release',
      actor: 'arbiter',
      reason: reason.trim(),
      split: { ...split, refund_id },
    });
  }
  return updateDeal(services, snapshot, movePaymentUpdate, {
    action: outcome,
    actor: 'arbiter',
    reason: reason.trim(),
  });
}

/** The order is shipped (the marketplace, or the seller in the cabinet): from now on only a dispute stops the release. */
export async function shipDeal(
  services: Services,
  actor: DealActor,
  dealId: string,
  input: { carrier: string; tracking: string },
) {
  const { snapshot, role } = await dealForVerb(services, actor, dealId, 'ship');
  await updateDeal(services, snapshot, shipUpdate, { actor: role === 'seller' ? 'seller' : 'marketplace', ...input });
  return (await loadSnapshot(services.db, dealId))!;
}

/** The order is delivered: the buyer's inspection window (the marketplace's inspection_days) starts. */
export async function deliverDeal(services: Services, actor: DealActor & { marketplace: Marketplace }, dealId: string) {
  const { snapshot } = await dealForVerb(services, actor, dealId, 'deliver');
  await updateDeal(services, snapshot, deliverUpdate, {
    actor: 'marketplace',
    inspection_days: actor.marketplace.inspection_days,
  });
  return (await loadSnapshot(services.db, dealId))!;
}

/** Part of the held money back to the buyer, agreed by both sides (the marketplace acts for the seller). */
export async function partialRefund(
  services: Services,
  actor: DealActor,
  dealId: string,
  input: { amount: number; reason: string },
) {
  const { snapshot } = await dealForVerb(services, actor, dealId, 'partial_refund');
  await updateDeal(services, snapshot, partialRefundUpdate, { ...input, refund_id: idempotentUuid('partial-refund') });
  return (await loadSnapshot(services.db, dealId))!;
}

/** 400 payout_destination_invalid when the destination cannot take this mode's payouts. */
function refuseDestination(mode: 'sandbox' | 'live', input: PayoutDestinationInput): void {
  const refused = destinationRefusal(mode, input);
  if (refused) throw problem('payout_destination_invalid', refused);
}

/** The marketplace's payout destination for one deal (before the seller's own); a payout waiting for one is made. */
export async function setDealPayoutDestination(
  services: Services,
  actor: DealActor & { marketplace: Marketplace },
  dealId: string,
  input: PayoutDestinationInput,
) {
  const { snapshot } = await dealForVerb(services, actor, dealId, 'payout_destination');
  const payment = snapshot.payments.at(-1);
  refuseDestination(payment ? (payment.provider === 'sandbox' ? 'sandbox' : 'live') : actor.marketplace.mode, input);
  const stored = await setDealDestination(services.db, services.masterKey, dealId, input);
  await signalDeal(services, snapshot, payoutDestinationSignal, { by: 'marketplace' });
  return stored;
}

/**
 * The seller's own payout destination, for every deal they sell in: a test card pays sandbox deals, a card synonym or
 * a wallet live ones. Each of their deals whose payout waits for a destination, or failed, is paid out again.
 */
export async function setSellerPayoutDestination(services: Services, user: User, input: PayoutDestinationInput) {
  refuseDestination(input.type === 'test_card' ? 'sandbox' : 'live', input);
  const stored = await setSellerDestination(services.db, services.masterKey, user.id, input);
  const waiting = await services.db.query<{ id: string }>(
    `SELECT DISTINCT d.id FROM deals d JOIN deal_payments p ON p.deal_id = d.id
      WHERE d.seller_id = $1 AND p.status = 'released' AND p.payout_status IN ('awaiting_destination', 'failed')`,
    [user.id],
  );
  for (const { id } of waiting.rows) {
    const snapshot = await loadSnapshot(services.db, id);
    if (snapshot) await signalDeal(services, snapshot, payoutDestinationSignal, { by: 'seller' });
  }
  return stored;
}

/** Cancels a deal before money is held: the marketplace, or an administrator. */
export async function cancelDeal(services: Services, actor: DealActor, dealId: string, reason: string) {
  const { snapshot } = await dealForVerb(services, actor, dealId, 'cancel');
  await updateDeal(services, snapshot, cancelUpdate, {
    actor: actor.kind === 'administrator' ? 'administrator' : 'marketplace',
    reason,
  });
  return (await loadSnapshot(services.db, dealId))!;
}

/** The author a party writes as in the dispute's thread. */
function disputeAuthor(role: DealRole): DisputeAuthor {
  if (role === 'buyer' || role === 'seller' || role === 'marketplace') return role;
  if (role === 'administrator') return 'arbiter';
  throw notFound('No such deal.');
}

/** A message (and evidence files, stored first) in the dispute's thread, by a buyer, seller, marketplace or the arbiter. */
export async function addDisputeMessage(
  services: Services,
  actor: DealActor,
  dealId: string,
  input: { text: string; files: { name: string; contentType: string; bytes: Buffer }[] },
) {
  const { snapshot, role } = await dealForVerb(services, actor, dealId, 'message');
  const author = disputeAuthor(role);
  const { user } = await ensureUser(services.db, { email: snapshot.deal.buyer_email, name: snapshot.deal.buyer_name });
  const organization = (await personalOrganization(services.db, user.id))!;
  const files: DisputeFile[] = [];
  for (const file of input.files) {
    const id = randomUUID();
    const stored = await services.documents.put({
      organizationId: organization.id,
      documentId: id,
      bytes: file.bytes,
      contentType: file.contentType,
    });
    files.push({ id, name: file.name, size: stored.size, content_type: file.contentType, storage_key: stored.key });
  }
  const message = { id: randomUUID(), author, text: input.text, files, created_at: new Date().toISOString() };
  return withFileRemovedOnRefusal(
    services,
    files.map((file) => file.storage_key),
    () => updateDeal(services, snapshot, disputeMessageUpdate, { message }),
  );
}

/**
 * Mails the buyer a fresh invitation, or a sign-in link when the account has a password; limited per deal (429 with
 * Retry-After) so a marketplace cannot turn it into a mail cannon.
 */
export async function resendInvitation(services: Services, marketplace: Marketplace, dealId: string): Promise<void> {
  const { snapshot } = await dealFor(services, { kind: 'marketplace', marketplace }, dealId);
  // A closed deal asks nothing more of the buyer: an invitation to it would only confuse them.
  if (isFinal(dealStatus(snapshot)))
    throw problem('deal_closed', 'The deal is closed (paid, refunded or cancelled): no invitation is sent for it.');
  const { hits, retry_after } = await countInvitationResend(services.db, dealId, INVITATION_WINDOW_SECONDS);
  if (hits > INVITATIONS_PER_WINDOW) {
    throw problem(
      'too_many_invitations',
      `This deal's invitation was sent ${INVITATIONS_PER_WINDOW} times within the hour; try again later.`,
      {
        headers: { 'Retry-After': String(Math.max(retry_after, 1)) },
      },
    );
  }
  const { deal } = snapshot;
  const { user } = await ensureUser(services.db, { email: deal.buyer_email, name: deal.buyer_name });
  const locale = (await findMailRecipient(services.db, user.email))?.locale ?? 'ru';
  const invitation = await renewInvitation(services.db, user.id);
  const dealUrl = dealPageUrl(services.config.BASE_URL, deal.id);
  const mail = invitation
    ? invitationMail({
        role: 'buyer',
        locale,
        name: user.name,
        svcId: user.id,
        dealTitle: deal.title,
        marketplaceName: marketplace.name,
        link: `${services.config.BASE_URL}/cabinet/invite?token=${invitationToken(services.masterKey, invitation.id)}`,
        dealUrl,
      })
    : // The account has a password: the deal's link, which asks them to sign in.
      dealMail(
        locale,
        user.name,
        {
          marketplaceName: marketplace.name,
          title: deal.title,
          amount: deal.amount,
          currency: deal.currency,
          url: dealUrl,
        },
        { kind: 'new_deal', role: 'buyer' },
      );
  await services.mailer.send({ key: `invitation-again/${deal.id}/${randomUUID()}`, to: user.email, ...mail });
}

const INVITATIONS_PER_WINDOW = 3;
const INVITATION_WINDOW_SECONDS = 3600;

/** The person's deals, newest first, each with their part in it. */
export async function dealsOfUser(services: Services, user: User): Promise<DealInContext[]> {
  const rows = await dealsOfPerson(services.db, user.email);
  const snapshots = await Promise.all(rows.map((row) => loadSnapshot(services.db, row.id)));
  return snapshots.map((snapshot, index) => ({ snapshot: snapshot!, role: rows[index].role }));
}

/** Approvals addressed to the person, newest first, each with its deal. */
export async function approvalsOfUser(services: Services, user: User) {
  const items = [];
  for (const row of await approvalsOfPerson(services.db, user.email)) {
    const snapshot = (await loadSnapshot(services.db, row.deal_id))!;
    items.push({ approval: snapshot.approvals.find((approval) => approval.id === row.id)!, snapshot });
  }
  return items;
}

/** A document or an evidence file of a deal the actor may see, with its bytes; 404 otherwise. */
export async function fileFor(services: Services, actor: DealActor, fileId: string) {
  const file = isUuid(fileId) ? await dealFile(services.db, fileId) : undefined;
  if (!file || !(await dealFor(services, actor, file.deal_id).catch(() => undefined)))
    throw notFound('No such document.');
  return { name: file.name, content_type: file.content_type, body: await services.documents.get(file.storage_key) };
}

// Administrators: every marketplace's deals, what happened to one, the disputes queue, and the buyer's invitation again.

const ADMINISTRATOR: DealActor = { kind: 'administrator' };

/** A page of every marketplace's deals; a cursor that names no deal is 400. */
export async function administratorDeals(services: Services, filter: DealListFilter) {
  if (
    filter.startingAfter &&
    !(isUuid(filter.startingAfter) && (await findDeal(services.db, { id: filter.startingAfter })))
  ) {
    throw problem('invalid_cursor', 'starting_after must be the id of a deal, as a previous page listed it.');
  }
  return listDeals(services.db, filter);
}

/** The deal with its webhook events, its deliveries, and where its workflow is in the Temporal Web UI. */
export async function administratorDeal(services: Services, dealId: string) {
  const { snapshot, role } = await dealFor(services, ADMINISTRATOR, dealId);
  const [events, deliveries] = await Promise.all([
    dealEvents(services.db, dealId),
    dealDeliveries(services.db, dealId),
  ]);
  return {
    snapshot,
    actions: actionsFor(snapshot, role, ADMINISTRATOR),
    events,
    deliveries,
    temporalUrl: temporalUrl(services, snapshot.deal),
  };
}

/** The deal's workflow in the Temporal Web UI (its id is fixed by the marketplace and the external id). */
export function temporalUrl(services: Services, deal: DealRecord): string {
  const { TEMPORAL_UI_URL, TEMPORAL_NAMESPACE } = services.config;
  const workflowId = dealWorkflowId(deal.marketplace_id, deal.external_id);
  return `${TEMPORAL_UI_URL}/namespaces/${encodeURIComponent(TEMPORAL_NAMESPACE)}/workflows/${encodeURIComponent(workflowId)}`;
}

/**
 * A page of disputes with their deals (of one marketplace, given `marketplaceId`): open ones oldest first; a cursor
 * that names no dispute of that status is 400.
 */
export async function disputeQueue(
  services: Services,
  filter: { status: 'open' | 'decided'; limit: number; startingAfter?: string; marketplaceId?: string },
) {
  if (
    filter.startingAfter &&
    !(isUuid(filter.startingAfter) && (await hasDispute(services.db, filter.startingAfter, filter.status)))
  ) {
    throw problem(
      'invalid_cursor',
      `starting_after must be the deal id of a ${filter.status} dispute, as a previous page listed it.`,
    );
  }
  const { rows, hasMore } = await listDisputes(services.db, filter);
  const snapshots = await Promise.all(rows.map((row) => loadSnapshot(services.db, row.deal_id)));
  return { items: rows.map((row, index) => ({ ...row, snapshot: snapshots[index]! })), hasMore };
}

/** The buyer's invitation again, sent by an administrator as the deal's marketplace would, under the same limit. */
export async function administratorResendInvitation(services: Services, dealId: string): Promise<void> {
  const { snapshot } = await dealFor(services, ADMINISTRATOR, dealId);
  const marketplace = (await findMarketplace(services.db, snapshot.deal.marketplace_id))!;
  await resendInvitation(services, marketplace, dealId);
}
