// A marketplace's one webhook endpoint. The secret is made once, on the first registration, and kept when the URL
// changes; it is stored encrypted with the master key because the marketplace may read it again.
import type { LookupFunction } from 'node:net';
import type { Db } from '../db.ts';
import { Problem } from '../http/problem.ts';
import type { Marketplace } from '../marketplaces/marketplaces.ts';
import { decryptSecret, encryptSecret } from '../secrets.ts';
import { newWebhookSecret } from './signing.ts';
import { AddressNotAllowed, resolveWebhookAddresses } from './ssrf.ts';

export interface WebhookEndpoint {
  url: string;
  secret: string;
  created_at: Date;
  updated_at: Date;
}

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
    throw new Problem(400, 'validation_failed', 'The request body is invalid: url: live marketplaces need an https URL', {
      errors: [{ path: 'url', message: 'live marketplaces need an https URL' }],
    });
  }
  try {
    await resolveWebhookAddresses(url.hostname, options);
  } catch (error) {
    if (!(error instanceof AddressNotAllowed)) throw error;
    const allowed = options.allowLoopback ? 'a public or loopback address' : 'a public address';
    throw new Problem(400, 'webhook_url_not_allowed', `Webhooks must reach ${allowed}: ${error.message}. Use a publicly reachable URL.`);
  }
}

/** Creates or re-points the endpoint; the secret survives a URL change. Concurrent first calls agree on one secret. */
export async function saveWebhookEndpoint(
  db: Db,
  masterKey: Buffer,
  marketplaceId: string,
  url: string,
): Promise<WebhookEndpoint> {
  const result = await db.query<Row>(
    `INSERT INTO webhook_endpoints (marketplace_id, url, secret_encrypted) VALUES ($1, $2, $3)
     ON CONFLICT (marketplace_id) DO UPDATE SET url = EXCLUDED.url, updated_at = now()
     RETURNING url, secret_encrypted, created_at, updated_at`,
    [marketplaceId, url, encryptSecret(masterKey, newWebhookSecret())],
  );
  return open(masterKey, result.rows[0]!);
}

export async function findWebhookEndpoint(db: Db, masterKey: Buffer, marketplaceId: string): Promise<WebhookEndpoint | undefined> {
  const result = await db.query<Row>(
    'SELECT url, secret_encrypted, created_at, updated_at FROM webhook_endpoints WHERE marketplace_id = $1',
    [marketplaceId],
  );
  return result.rows[0] && open(masterKey, result.rows[0]);
}

interface Row {
  url: string;
  secret_encrypted: string;
  created_at: Date;
  updated_at: Date;
}

function open(masterKey: Buffer, row: Row): WebhookEndpoint {
  return { url: row.url, secret: decryptSecret(masterKey, row.secret_encrypted), created_at: row.created_at, updated_at: row.updated_at };
}
