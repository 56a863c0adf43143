// A marketplace's one webhook endpoint. The secret is made once, on the first registration, and kept when the URL
// changes; it is stored encrypted with the master key because the marketplace may read it again. A rotation keeps the
// replaced secret (encrypted too) signing beside the new one for a while, so receivers switch without a gap.
import type { LookupFunction } from 'node:net';
import type { Db } from '../db.ts';
import { problem } from '../http/problem.ts';
import type { Marketplace } from '../marketplaces/marketplaces.ts';
import { decryptSecret, encryptSecret } from '../secrets.ts';
import { WEBHOOK_EVENTS, type WebhookEvent } from './events.ts';
import { newWebhookSecret } from './signing.ts';
import { AddressNotAllowed, resolveWebhookAddresses } from './ssrf.ts';

export interface WebhookEndpoint {
  url: string;
  secret: string;
  /** The types the endpoint is sent, in WEBHOOK_EVENTS' order: all of them unless the marketplace chose. */
  events: WebhookEvent[];
  /** Until when the secret the last rotation replaced signs beside `secret` (past: no more); null before any rotation. */
  previous_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** How long a rotated-out secret may keep signing: up to a week, as a receiver's deployment needs at most. */
export const MAX_PREVIOUS_SECRET_SECONDS = 7 * 24 * 3600;

/**
 * Refuses URLs a marketplace of this mode may not use: 400 validation_failed (live needs https) or
 * webhook_url_not_allowed (an address that is not public, for every mode; the loopback passes when `allowLoopback`,
 * WEBHOOK_ALLOW_LOOPBACK, is on). `lookup` (node's dns.lookup by default) lets tests play the DNS server.
 */
export async function checkWebhookUrl(
  marketplace: Pick<Marketplace, 'mode'>,
  raw: string,
  options: { allowLoopback: boolean; lookup?: LookupFunction },
): Promise<void> {
  const url = new URL(raw); // the route's schema already made sure it parses
  if (marketplace.mode === 'live' && url.protocol !== 'https:') {
    throw problem('validation_failed', 'The request body is invalid: url: live marketplaces need an https URL', {
      errors: [{ path: 'url', message: 'live marketplaces need an https URL' }],
    });
  }
  try {
    await resolveWebhookAddresses(url.hostname, options);
  } catch (error) {
    if (!(error instanceof AddressNotAllowed)) throw error;
    const allowed = options.allowLoopback ? 'a public or loopback address' : 'a public address';
    throw problem(
      'webhook_url_not_allowed',
      `Webhooks must reach ${allowed}: ${error.message}. Use a publicly reachable URL.`,
    );
  }
}

/**
 * Creates or re-points the endpoint and sets the types it is sent (`events` undefined: every type, those added later
 * included). The secret survives a URL change. Concurrent first calls agree on one secret.
 */
export async function saveWebhookEndpoint(
  db: Db,
  masterKey: Buffer,
  marketplaceId: string,
  url: string,
  events?: readonly WebhookEvent[],
): Promise<WebhookEndpoint> {
  const chosen = events ? WEBHOOK_EVENTS.filter((event) => events.includes(event)) : null;
  const result = await db.query<Row>(
    `INSERT INTO webhook_endpoints (marketplace_id, url, secret_encrypted, events) VALUES ($1, $2, $3, $4)
     ON CONFLICT (marketplace_id) DO UPDATE SET url = EXCLUDED.url, events = EXCLUDED.events, updated_at = now()
     RETURNING ${COLUMNS}`,
    [marketplaceId, url, encryptSecret(masterKey, newWebhookSecret()), chosen],
  );
  return open(masterKey, result.rows[0]);
}

export async function findWebhookEndpoint(
  db: Db,
  masterKey: Buffer,
  marketplaceId: string,
): Promise<WebhookEndpoint | undefined> {
  const result = await db.query<Row>(`SELECT ${COLUMNS} FROM webhook_endpoints WHERE marketplace_id = $1`, [
    marketplaceId,
  ]);
  return result.rows[0] && open(masterKey, result.rows[0]);
}

/**
 * A new secret; the one it replaces keeps signing for `expirePreviousAfterSeconds` (0: stops at once). A secret
 * replaced earlier whose overlap is still running stops at once: only the last two secrets ever sign. One statement,
 * so concurrent rotations chain (each replaces the one before it) instead of losing a secret. Undefined when the
 * marketplace has no endpoint.
 */
export async function rotateWebhookSecret(
  db: Db,
  masterKey: Buffer,
  marketplaceId: string,
  expirePreviousAfterSeconds: number,
): Promise<WebhookEndpoint | undefined> {
  const result = await db.query<Row>(
    `UPDATE webhook_endpoints
        SET previous_secret_encrypted = secret_encrypted, secret_encrypted = $2,
            previous_secret_expires_at = now() + make_interval(secs => $3), updated_at = now()
      WHERE marketplace_id = $1
      RETURNING ${COLUMNS}`,
    [marketplaceId, encryptSecret(masterKey, newWebhookSecret()), expirePreviousAfterSeconds],
  );
  return result.rows[0] && open(masterKey, result.rows[0]);
}

/**
 * Unregisters the endpoint: no delivery is made for later events, and deliveries not yet delivered are skipped (an
 * attempt already on the wire finishes; no other is made, even if a webhook is registered again later). The events
 * stay, for GET /api/mkt/events. One statement, so no delivery is skipped while the endpoint stays. Idempotent.
 */
export async function deleteWebhookEndpoint(db: Db, marketplaceId: string): Promise<void> {
  await db.query(
    `WITH gone AS (DELETE FROM webhook_endpoints WHERE marketplace_id = $1 RETURNING marketplace_id)
     UPDATE webhook_deliveries d SET status = 'skipped', due_at = NULL, updated_at = now()
       FROM webhook_events e, gone
      WHERE e.id = d.event_id AND e.marketplace_id = gone.marketplace_id AND d.status IN ('pending', 'retrying')`,
    [marketplaceId],
  );
}

const COLUMNS = 'url, secret_encrypted, events, previous_secret_expires_at, created_at, updated_at';

interface Row {
  url: string;
  secret_encrypted: string;
  events: WebhookEvent[] | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

function open(masterKey: Buffer, row: Row): WebhookEndpoint {
  return {
    url: row.url,
    secret: decryptSecret(masterKey, row.secret_encrypted),
    events: row.events ?? [...WEBHOOK_EVENTS],
    previous_expires_at: row.previous_secret_expires_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
