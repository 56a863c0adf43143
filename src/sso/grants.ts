// What a user has let SSO clients have: one grant per user and client, recorded with every code issued, with the scopes
// consented to (src/sso/claims.ts). The browser asks consent before the first (and after a revocation), and again when
// a sign-in asks for a scope the grant lacks; a marketplace's own client needs none. Revoking a grant
// also ends what the client holds: the user's access and refresh tokens for it stop working and their unused codes
// expire.
import { inTransaction, type Db } from '../db.ts';
import type { SsoClient } from './clients.ts';
import { endRefreshTokens } from './refresh-tokens.ts';
import { consentScopes } from './claims.ts';

export interface ConnectedSite {
  client_id: string;
  name: string;
  first_at: Date;
  last_at: Date;
}

/** Whether the browser must ask the user before this client gets a code for this scope. */
export async function consentNeeded(db: Db, client: SsoClient, userId: string, scope: string): Promise<boolean> {
  if (client.marketplace_id !== null) return false;
  const result = await db.query(
    'SELECT 1 FROM sso_grants WHERE user_id = $1 AND client_id = $2 AND revoked_at IS NULL AND scopes @> $3::text[]',
    [userId, client.client_id, [...consentScopes(scope)]],
  );
  return result.rowCount === 0;
}

/**
 * A sign-in to the client: starts the grant (again, after a revocation) or moves its last_at; the scope's consent
 * scopes join those of a live grant, or replace those of a revoked one.
 */
export async function recordGrant(db: Db, clientId: string, userId: string, scope: string): Promise<void> {
  await db.query(
    `INSERT INTO sso_grants AS g (user_id, client_id, scopes) VALUES ($1, $2, $3::text[])
     ON CONFLICT (user_id, client_id) DO UPDATE
        SET last_at = now(), revoked_at = NULL, first_at = CASE WHEN g.revoked_at IS NULL THEN g.first_at ELSE now() END,
            scopes = CASE WHEN g.revoked_at IS NULL
                          THEN ARRAY(SELECT DISTINCT unnest(g.scopes || EXCLUDED.scopes) ORDER BY 1)
                          ELSE EXCLUDED.scopes END`,
    [userId, clientId, [...consentScopes(scope)]],
  );
}

/**
 * The user's live grants, the most recently used first: all of them, or a `page` of `limit` after the site whose
 * client_id is `startingAfter`.
 */
export async function connectedSites(
  db: Db,
  userId: string,
  page?: { limit: number; startingAfter?: string },
): Promise<ConnectedSite[]> {
  // A page starts after its cursor's grant (revoked since or not, its row stays); a cursor naming none of the user's
  // grants starts from the first site.
  const result = await db.query<ConnectedSite>(
    `WITH cursor AS (SELECT last_at, client_id FROM sso_grants WHERE user_id = $1 AND client_id = $2::text)
     SELECT g.client_id, c.name, g.first_at, g.last_at FROM sso_grants g JOIN sso_clients c USING (client_id)
      WHERE g.user_id = $1 AND g.revoked_at IS NULL
        AND (NOT EXISTS (SELECT 1 FROM cursor) OR EXISTS (SELECT 1 FROM cursor k
              WHERE g.last_at < k.last_at OR (g.last_at = k.last_at AND g.client_id > k.client_id)))
      ORDER BY g.last_at DESC, g.client_id LIMIT $3`,
    [userId, page?.startingAfter ?? null, page?.limit ?? null],
  );
  return result.rows;
}

/**
 * Revokes a live grant with the client's tokens and codes; undefined when there is none. The grant row is locked by the
 * first statement: a code exchange holding it (src/sso/codes.ts) finishes first, and the second statement, which reads
 * afresh, revokes the token it issued; an exchange that comes later finds the grant revoked.
 */
export async function revokeSite(
  db: Db,
  userId: string,
  clientId: string,
): Promise<(ConnectedSite & { revoked_at: Date }) | undefined> {
  return inTransaction(db, async (client) => {
    const result = await client.query<ConnectedSite & { revoked_at: Date }>(
      `WITH revoked AS (
         UPDATE sso_grants SET revoked_at = now() WHERE user_id = $1 AND client_id = $2 AND revoked_at IS NULL
         RETURNING user_id, client_id, first_at, last_at, revoked_at
       )
       SELECT r.client_id, c.name, r.first_at, r.last_at, r.revoked_at FROM revoked r JOIN sso_clients c USING (client_id)`,
      [userId, clientId],
    );
    if (result.rowCount === 0) return undefined;
    await endRefreshTokens(client, userId, clientId);
    await client.query(
      'UPDATE sso_access_tokens SET revoked_at = now() WHERE user_id = $1 AND client_id = $2 AND revoked_at IS NULL',
      [userId, clientId],
    );
    await client.query(
      `UPDATE sso_codes SET expires_at = '-infinity' WHERE user_id = $1 AND client_id = $2 AND consumed_at IS NULL AND expires_at > now()`,
      [userId, clientId],
    );
    return result.rows[0];
  });
}
