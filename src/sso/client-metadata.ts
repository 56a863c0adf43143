// Client ID metadata documents (the MCP authorization specification; draft-ietf-oauth-client-id-metadata-document): a
// client whose client_id is an https URL needs no registration; the authorization request makes us fetch the JSON
// document at that URL, which names the client and its redirect URIs. The client is public (PKCE required), as a
// client that registered itself is (decision 0022). The fetch is guarded like a webhook's delivery: the host must
// resolve to public addresses only (src/webhooks/ssrf.ts; the loopback only with SSO_CLIENT_METADATA_ALLOW_LOOPBACK, a
// development setting, which also allows plain http there), the connection goes to the addresses that passed, no
// redirect is followed, the answer has MAX_DOCUMENT_BYTES and FETCH_TIMEOUT_MS at most. The document is kept in
// PostgreSQL for its HTTP cache lifetime (Cache-Control max-age, at most a day), so a sign-in does not fetch it again.
import http from 'node:http';
import https from 'node:https';
import { z } from 'zod';
import { recordAudit } from '../admin/audit.ts';
import { inTransaction } from '../db.ts';
import { problem } from '../http/problem.ts';
import type { Services } from '../services.ts';
import {
  AddressNotAllowed,
  isLoopbackAddress,
  resolveWebhookAddresses,
  pinnedLookup,
  type CheckedAddress,
} from '../webhooks/ssrf.ts';
import { GRANT_TYPES, MAX_CLIENT_ID_LENGTH, saveMetadataDocumentClient, type GrantType } from './clients.ts';
import { MAX_REDIRECT_URIS, MAX_REDIRECT_URI_LENGTH, parseRedirectUris } from './redirect-uris.ts';

/** The draft's suggested limit: a client's metadata is small. */
export const MAX_DOCUMENT_BYTES = 5 * 1024;
export const FETCH_TIMEOUT_MS = 5_000;
/** Without cache headers a document stands for five minutes; whatever they say, for a day at most. */
const DEFAULT_CACHE_SECONDS = 300;
const MAX_CACHE_SECONDS = 86_400;

/** Whether a client_id is meant as the address of a metadata document (administrators' IDs never have a colon). */
export const isMetadataDocumentClientId = (clientId: string) => /^https?:\/\//i.test(clientId);

const Document = z.object({
  client_id: z.string(),
  redirect_uris: z.array(z.string().min(1).max(MAX_REDIRECT_URI_LENGTH)).min(1).max(MAX_REDIRECT_URIS),
  client_name: z.string().trim().min(1).max(200).optional(),
  token_endpoint_auth_method: z.string().optional(),
  grant_types: z.array(z.string()).max(10).optional(),
  response_types: z.array(z.string()).max(10).optional(),
  client_secret: z.unknown().optional(),
});

class Unusable extends Error {}

/**
 * Makes sure the client a metadata-document client_id names is stored and fresh: a fresh cached document is used as
 * it is, a stale or missing one is fetched and checked again. Nothing for any other client_id. A document that cannot
 * be used is 400 `unknown_client` naming why, before anything else of the request is looked at.
 */
export async function resolveMetadataDocumentClient(services: Services, clientId: string | null | undefined) {
  if (!clientId || !isMetadataDocumentClientId(clientId)) return;
  const { db, masterKey, config } = services;
  const cached = await db.query(
    'SELECT 1 FROM sso_client_metadata_documents WHERE client_id = $1 AND expires_at > now()',
    [clientId],
  );
  if (cached.rowCount === 1) return;
  let resolved;
  try {
    resolved = await fetchDocument(clientId, config.SSO_CLIENT_METADATA_ALLOW_LOOPBACK);
  } catch (error) {
    if (!(error instanceof Unusable || error instanceof AddressNotAllowed)) throw error;
    throw problem(
      'unknown_client',
      `The client_id is a client ID metadata document's address, and the document cannot be used: ${error.message}.`,
    );
  }
  const { document, host, lifetimeSeconds, redirectUris, grantTypes } = resolved;
  await inTransaction(db, async (client) => {
    const saved = {
      client_id: clientId,
      // The consent page names the client by its own word and by the host that vouches for it.
      name: document.client_name ? `${document.client_name} (${host})` : host,
      redirect_uris: redirectUris,
      grant_types: grantTypes,
    };
    const { created } = await saveMetadataDocumentClient(client, masterKey, saved);
    // A client that appeared by itself is on the record, as one that registered itself is (src/sso/registration.ts).
    if (created)
      await recordAudit(client, {
        actor: `document:${host}`,
        action: 'resolveSsoClientMetadataDocument',
        object_type: 'sso_client',
        object_id: clientId,
        after: saved,
      });
    await client.query(
      `INSERT INTO sso_client_metadata_documents (client_id, document, expires_at)
       VALUES ($1, $2, now() + make_interval(secs => $3))
       ON CONFLICT (client_id) DO UPDATE SET document = EXCLUDED.document, fetched_at = now(), expires_at = EXCLUDED.expires_at`,
      [clientId, document, lifetimeSeconds],
    );
  });
}

/** The client_id's URL when the draft allows it (https, a path, no credentials, query, fragment or dot segments). */
function documentUrl(clientId: string, allowLoopback: boolean): URL {
  if (clientId.length > MAX_CLIENT_ID_LENGTH)
    throw new Unusable(`it is longer than ${MAX_CLIENT_ID_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    throw new Unusable('it is not a URL');
  }
  const loopbackHost = isLoopbackAddress(url.hostname) || url.hostname === 'localhost';
  if (url.protocol !== 'https:' && !(allowLoopback && url.protocol === 'http:' && loopbackHost))
    throw new Unusable('it must be an https URL');
  if (url.username || url.password || url.search || url.hash || clientId.includes('#'))
    throw new Unusable('it may have no user, password, query or fragment');
  if (url.pathname === '/' || /\/\.\.?(\/|$)/.test(clientId.slice(url.origin.length)))
    throw new Unusable('it must have a path, without . or .. segments');
  // Compared as written from here on: the URL must be in its normal form.
  if (url.href !== clientId) throw new Unusable('it is not in its normal form');
  return url;
}

async function fetchDocument(clientId: string, allowLoopback: boolean) {
  const url = documentUrl(clientId, allowLoopback);
  const pinned = await resolveWebhookAddresses(url.hostname, { allowLoopback });
  const answer = await get(url, pinned);
  if (answer.status !== 200)
    throw new Unusable(`its address answered HTTP ${answer.status} (redirects are not followed)`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.body.toString('utf8'));
  } catch {
    throw new Unusable('it is not JSON');
  }
  const checked = Document.safeParse(parsed);
  if (!checked.success) throw new Unusable(`it is not client metadata (${checked.error.issues[0]?.path.join('.')})`);
  const document = checked.data;
  if (document.client_id !== clientId) throw new Unusable('its client_id is not the address it was fetched from');
  if (document.client_secret !== undefined || (document.token_endpoint_auth_method ?? 'none') !== 'none')
    throw new Unusable('its client must be public (token_endpoint_auth_method none, no secret)');
  if (document.response_types && document.response_types.some((type) => type !== 'code'))
    throw new Unusable('its response_types may only be code');
  const grantTypes = document.grant_types ?? ['authorization_code'];
  if (!grantTypes.every((grant): grant is GrantType => (GRANT_TYPES as readonly string[]).includes(grant)))
    throw new Unusable('its grant_types may only be authorization_code and refresh_token');
  if (document.redirect_uris.some((uri) => uri.includes(' '))) throw new Unusable('a redirect URI has a space');
  const uris = parseRedirectUris(document.redirect_uris.join(' '), { wildcard: false });
  if ('problem' in uris) throw new Unusable(`redirect_uris: ${uris.problem}`);
  return {
    document: parsed as Record<string, unknown>,
    host: url.host,
    lifetimeSeconds: cacheLifetime(answer.cacheControl),
    redirectUris: uris.uris,
    grantTypes,
  };
}

/** Seconds the answer may be reused: max-age capped at a day, none for no-store or no-cache, else the default. */
export function cacheLifetime(cacheControl: string | undefined): number {
  const directives = (cacheControl ?? '').toLowerCase();
  if (/(^|[\s,])(no-store|no-cache)([\s,=]|$)/.test(directives)) return 0;
  const maxAge = /(^|[\s,])max-age\s*=\s*"?(\d+)"?/.exec(directives);
  return maxAge ? Math.min(Number(maxAge[2]), MAX_CACHE_SECONDS) : DEFAULT_CACHE_SECONDS;
}

/** One GET to the checked addresses: no redirects, at most MAX_DOCUMENT_BYTES, within FETCH_TIMEOUT_MS in all. */
function get(url: URL, pinned: CheckedAddress[]): Promise<{ status: number; body: Buffer; cacheControl?: string }> {
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? https : http).get(url, {
      headers: { Accept: 'application/json' },
      agent: false, // no pooled socket may carry us to an address other than the pinned ones
      lookup: pinnedLookup(pinned),
    });
    const fail = (reason: string) => {
      clearTimeout(timer);
      request.destroy();
      reject(new Unusable(reason));
    };
    const timer = setTimeout(() => fail(`no whole answer within ${FETCH_TIMEOUT_MS / 1000} s`), FETCH_TIMEOUT_MS);
    request.on('error', () => fail('its address could not be reached'));
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      const declared = Number(response.headers['content-length']);
      if (declared > MAX_DOCUMENT_BYTES) return fail(`it is larger than ${MAX_DOCUMENT_BYTES} bytes`);
      const chunks: Buffer[] = [];
      let length = 0;
      response.on('data', (chunk: Buffer) => {
        length += chunk.length;
        if (length > MAX_DOCUMENT_BYTES) return fail(`it is larger than ${MAX_DOCUMENT_BYTES} bytes`);
        chunks.push(chunk);
      });
      response.on('end', () => {
        clearTimeout(timer);
        const cacheControl = response.headers['cache-control'];
        resolve({ status, body: Buffer.concat(chunks), cacheControl });
      });
      response.on('error', () => fail('its answer broke off'));
    });
  });
}
