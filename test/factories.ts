// What tests make before the part they prove. Two kinds:
// - through the API (…ViaApi), as a marketplace or an administrator would, where the making is part of what a test
//   proves or its side effects (the workflow started, the buyer invited) are what the test reads next;
// - written straight into PostgreSQL (insert…), as the service or the deal workflow would have left them, where they
//   are only a precondition: a test that starts a workflow at a given step instead of playing every request before
//   it. The store (src/deals/store.ts) reads them back, and the first change through the API starts the deal's
//   workflow from them (update-with-start, src/deals/commands.ts).
import { createHash, randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { Services } from '../src/services.ts';
import { ensureUser } from '../src/accounts/users.ts';
import { createSession } from '../src/accounts/sessions.ts';
import type { DocumentKind } from '../src/deals/model.ts';
import { createMarketplace, type MarketplaceMode } from '../src/marketplaces/marketplaces.ts';
import { saveWebhookEndpoint } from '../src/webhooks/endpoints.ts';
import type { WebhookEventInput } from '../src/webhooks/events.ts';
import { SESSION_COOKIE } from '../src/web/session.ts';
import { json, post, uniqueEmail, uniqueId, type TestServer } from './helpers.ts';

const DAY_MS = 24 * 3600 * 1000;

// ---- marketplaces ---------------------------------------------------------------------------------------------------

export interface TestMarketplace {
  id: string;
  name: string;
  mode: MarketplaceMode;
  /** The marketplace server's key (the X-Svc-Key header). */
  secret_key: string;
  /** The widget's key. */
  public_key: string;
}

/** A marketplace (sandbox unless `mode` says) with its keys, as an administrator's creation stores it. */
export async function insertMarketplace(
  services: Pick<Services, 'db'>,
  options: { name?: string; mode?: MarketplaceMode; allowed_origins?: string[]; sso_redirect_uri?: string } = {},
): Promise<TestMarketplace> {
  const { marketplace, secretKey, publicKey } = await createMarketplace(services.db, {
    ...options,
    name: options.name ?? uniqueId('shop'),
    mode: options.mode ?? 'sandbox',
  });
  return {
    id: marketplace.id,
    name: marketplace.name,
    mode: marketplace.mode,
    secret_key: secretKey,
    public_key: publicKey,
  };
}

/**
 * A marketplace made by POST /admin/marketplaces (201) with these fields (a sandbox one with a unique name unless
 * they say otherwise), as the server's bootstrap administrator or `as` (an administrator's headers): the answer.
 */
export async function createMarketplaceViaApi(
  server: Pick<TestServer, 'url' | 'adminToken'>,
  fields: Record<string, unknown> = {},
  as: Record<string, string> = { Authorization: `Bearer ${server.adminToken}` },
): Promise<TestMarketplace & Record<string, any>> {
  const response = await post(
    `${server.url}/admin/marketplaces`,
    { name: uniqueId('shop'), mode: 'sandbox', ...fields },
    as,
  );
  expect(response.status).toBe(201);
  return json(response);
}

// ---- deals through the API ------------------------------------------------------------------------------------------

type DealFields = Record<string, unknown> & { seller?: boolean };

/** A new deal's fields: a new external_id and buyer (and seller, with `seller`), a 'Sofa' of 2500, then these. */
function dealFields({ seller, ...given }: DealFields): Record<string, any> {
  return {
    external_id: uniqueId('order'),
    buyer_email: uniqueEmail('buyer'),
    ...(seller ? { seller_email: uniqueEmail('seller') } : {}),
    title: 'Sofa',
    amount: 2500,
    ...given,
  };
}

/** POST /api/mkt/deals with the marketplace's secret key: a deal of dealFields, whatever the answer. */
export async function postDeal(
  server: Pick<TestServer, 'url'>,
  marketplace: Pick<TestMarketplace, 'secret_key'>,
  fields: DealFields = {},
): Promise<{ response: Response; body: Record<string, any>; created: any }> {
  const body = dealFields(fields);
  const response = await post(`${server.url}/api/mkt/deals`, body, { 'X-Svc-Key': marketplace.secret_key });
  return { response, body, created: await json(response) };
}

export interface CreatedDeal {
  id: string;
  external_id: string;
  status: string;
  buyer_email: string;
  /** '' without a seller. */
  seller_email: string;
  /** The body sent. */
  body: Record<string, any>;
}

/** A deal made by POST /api/mkt/deals (201), as postDeal: its id, external_id and status, and who takes part. */
export async function createDealViaApi(
  server: Pick<TestServer, 'url'>,
  marketplace: Pick<TestMarketplace, 'secret_key'>,
  fields: DealFields = {},
): Promise<CreatedDeal> {
  const { response, body, created } = await postDeal(server, marketplace, fields);
  expect(response.status, JSON.stringify(created)).toBe(201);
  return { ...created, buyer_email: body.buyer_email, seller_email: body.seller_email ?? '', body };
}

// ---- deals through the widget ---------------------------------------------------------------------------------------

/**
 * POST /api/mkt/widget/deals with the marketplace's public key (from a shop's page: `headers` such as its Origin): a
 * deal of dealFields, whatever the answer. The body sent, the answer.
 */
export async function postWidgetDeal(
  server: Pick<TestServer, 'url'>,
  marketplace: Pick<TestMarketplace, 'public_key'>,
  fields: DealFields = {},
  headers: Record<string, string> = {},
): Promise<{ response: Response; body: Record<string, any>; deal: any }> {
  const body = { public_key: marketplace.public_key, ...dealFields(fields) };
  const response = await post(`${server.url}/api/mkt/widget/deals`, body, headers);
  return { response, body, deal: await json(response) };
}

/** A deal made through the widget (201), as postWidgetDeal: the answer (with its widget_token), the buyer, the body. */
export async function createWidgetDealViaApi(
  server: Pick<TestServer, 'url'>,
  marketplace: Pick<TestMarketplace, 'public_key'>,
  fields: DealFields = {},
  headers: Record<string, string> = {},
): Promise<CreatedDeal & { widget_token: string; invitation_sent: boolean; expires_at: string }> {
  const { response, body, deal } = await postWidgetDeal(server, marketplace, fields, headers);
  expect(response.status, JSON.stringify(deal)).toBe(201);
  return { ...deal, buyer_email: body.buyer_email, seller_email: body.seller_email ?? '', body };
}

// ---- people in the cabinet ------------------------------------------------------------------------------------------

export interface CabinetSession {
  userId: string;
  token: string;
  /** For the cabinet's JSON operations: Authorization: Bearer <token>. */
  headers: Record<string, string>;
  /** For its pages: the session cookie's name and value (a PageBrowser's `cookies.set(...cookie)`). */
  cookie: [string, string];
}

/**
 * A person (made as a deal makes them when new) signed in to the cabinet: a session made directly, not through a
 * sign-in form, for tests about what the person does once signed in (the sign-ins have tests of their own, and their
 * per-address limits count in the database every test shares).
 */
export async function cabinetSession(services: Pick<Services, 'db'>, email: string): Promise<CabinetSession> {
  const { user } = await ensureUser(services.db, { email });
  const { token } = await createSession(services.db, user.id, 3600);
  return { userId: user.id, token, headers: { Authorization: `Bearer ${token}` }, cookie: [SESSION_COOKIE, token] };
}

// ---- deals written as the workflow leaves them ----------------------------------------------------------------------

export interface HeldDeal {
  marketplaceId: string;
  dealId: string;
  externalId: string;
  buyerEmail: string;
  /** '' unless the deal was made with a seller. */
  sellerEmail: string;
  paymentId: string;
  /** When the acquirer's hold lapses (ISO 8601). */
  holdExpiresAt: string;
}

export interface HeldDealOptions {
  /** When the acquirer lets the money go: 7 days from now unless given (a time-skipping server's clock gives it). */
  holdExpiresAt?: Date;
  /** 2500 unless given. */
  amount?: number;
  /** 'Sofa' unless given. */
  title?: string;
  /** A seller too, besides the buyer. */
  seller?: boolean;
  /** The document the buyer approved: an offer.pdf unless given. */
  document?: { kind: DocumentKind; name: string };
  /** A webhook endpoint for the deal's marketplace, saved first. */
  webhookUrl?: string;
  /** The marketplace of the deal: a new sandbox one unless given. */
  marketplaceId?: string;
}

/**
 * A deal in `escrow_hold`, as its workflow leaves it: a document, the buyer's approval and a sandbox payment held until
 * `holdExpiresAt`. The buyer, and the seller when there is one, are people with a svc ID, as the workflow provisions
 * them (without the invitation mails).
 */
export async function insertHeldDeal(
  services: Pick<Services, 'db' | 'masterKey'>,
  options: HeldDealOptions = {},
): Promise<HeldDeal> {
  const { db } = services;
  const amount = options.amount ?? 2500;
  const marketplaceId = options.marketplaceId ?? (await insertMarketplace(services)).id;
  if (options.webhookUrl) await saveWebhookEndpoint(db, services.masterKey, marketplaceId, options.webhookUrl);
  // The buyer's documents live in the buyer's personal organization.
  const buyerEmail = uniqueEmail('buyer');
  const { user: buyer } = await ensureUser(db, { email: buyerEmail });
  const organization = await db.query<{ id: string }>('SELECT id FROM organizations WHERE owner_id = $1 AND personal', [
    buyer.id,
  ]);
  const sellerEmail = options.seller ? uniqueEmail('seller') : '';
  const seller = sellerEmail ? (await ensureUser(db, { email: sellerEmail })).user : undefined;

  const dealId = randomUUID();
  const externalId = uniqueId('order');
  const paymentId = randomUUID();
  const holdExpiresAt = (options.holdExpiresAt ?? new Date(Date.now() + 7 * DAY_MS)).toISOString();
  await db.query(
    `INSERT INTO deals (id, marketplace_id, external_id, title, buyer_email, seller_email, amount, currency, status, buyer_id, seller_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 'RUB', 'escrow_hold', $8, $9)`,
    [
      dealId,
      marketplaceId,
      externalId,
      options.title ?? 'Sofa',
      buyerEmail,
      sellerEmail,
      amount,
      buyer.id,
      seller?.id ?? null,
    ],
  );
  const document = options.document ?? { kind: 'offer' as const, name: 'offer.pdf' };
  const bytes = Buffer.from(document.kind);
  await db.query(
    `INSERT INTO deal_documents (id, deal_id, organization_id, kind, name, content_type, size, sha256, storage_key)
     VALUES ($1, $2, $3, $4, $5, 'application/pdf', $6, $7, $8)`,
    [
      randomUUID(),
      dealId,
      organization.rows[0].id,
      document.kind,
      document.name,
      bytes.length,
      createHash('sha256').update(bytes).digest('hex'),
      `factory/${dealId}/${document.kind}`,
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
  return { marketplaceId, dealId, externalId, buyerEmail, sellerEmail, paymentId, holdExpiresAt };
}

/** A person's bearer headers for the cabinet. */
type BearerHeaders = Record<string, string>;

/**
 * insertHeldDeal with its buyer, and its seller when it has one, signed in to the cabinet (cabinetSession): their
 * bearer headers, and the sessions (for a page browser's cookie).
 */
export function insertHeldDealSignedIn(
  services: Pick<Services, 'db' | 'masterKey'>,
  options: HeldDealOptions & { seller: true },
): Promise<
  HeldDeal & {
    buyer: BearerHeaders;
    seller: BearerHeaders;
    sessions: { buyer: CabinetSession; seller: CabinetSession };
  }
>;
export function insertHeldDealSignedIn(
  services: Pick<Services, 'db' | 'masterKey'>,
  options?: HeldDealOptions,
): Promise<
  HeldDeal & {
    buyer: BearerHeaders;
    seller?: BearerHeaders;
    sessions: { buyer: CabinetSession; seller?: CabinetSession };
  }
>;
export async function insertHeldDealSignedIn(
  services: Pick<Services, 'db' | 'masterKey'>,
  options: HeldDealOptions = {},
) {
  const held = await insertHeldDeal(services, options);
  const buyer = await cabinetSession(services, held.buyerEmail);
  const seller = held.sellerEmail ? await cabinetSession(services, held.sellerEmail) : undefined;
  return { ...held, buyer: buyer.headers, seller: seller?.headers, sessions: { buyer, seller } };
}

// ---- a deal row for webhook events ----------------------------------------------------------------------------------

/** The deal fields a webhook event's body carries. */
export type EventDeal = WebhookEventInput['deal'];

/** An approved deal row of the marketplace, for tests that write its webhook events themselves; `fields` override. */
export async function insertApprovedDeal(
  db: Pick<Services['db'], 'query'>,
  marketplaceId: string,
  fields: Partial<Omit<EventDeal, 'id' | 'marketplace_id'>> = {},
): Promise<EventDeal> {
  const deal: EventDeal = {
    id: randomUUID(),
    marketplace_id: marketplaceId,
    external_id: uniqueId('order'),
    title: 'Crate',
    amount: 500,
    currency: 'RUB',
    buyer_email: uniqueEmail('buyer'),
    seller_email: uniqueEmail('seller'),
    ...fields,
  };
  await db.query(
    `INSERT INTO deals (id, marketplace_id, external_id, title, buyer_email, seller_email, amount, currency, status)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'approved')`,
    [
      deal.id,
      deal.marketplace_id,
      deal.external_id,
      deal.title,
      deal.buyer_email,
      deal.seller_email,
      deal.amount,
      deal.currency,
    ],
  );
  return deal;
}
