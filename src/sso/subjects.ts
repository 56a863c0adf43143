// Subject identifiers (OpenID Connect Core §8): a `public` client's `sub` is the svc ID; a `pairwise` client's is a
// keyed hash (HMAC-SHA-256 with the master key) of its sector and the user, so two sites cannot match up a shared user
// by `sub`. The sector is the host every registered redirect URI shares (a wildcard's base host), or the client_id
// when they name several hosts: clients of one site (one host) see one `sub`, as §8.1 intends. The simplified flow's
// POST /sso/token keeps svc_id as the specification has it. Pairwise subjects are remembered as issued
// (sso_pairwise_subjects) so that a logout's id_token_hint finds its user again.
import type { Db } from '../db.ts';
import { keyedDigest } from '../secrets.ts';

export interface SubjectClient {
  client_id: string;
  subject_type: 'public' | 'pairwise';
  redirect_uris: string[];
}

/** The sector of a client: its redirect URIs' one host, else its client_id. */
export function sectorOf(client: Pick<SubjectClient, 'client_id' | 'redirect_uris'>): string {
  const hosts = new Set(
    client.redirect_uris.map((uri) => {
      const bare = uri.replace(/^https:\/\/\*\./, 'https://');
      return URL.canParse(bare) ? new URL(bare).hostname : uri;
    }),
  );
  return hosts.size === 1 ? `host:${[...hosts][0]}` : `client:${client.client_id}`;
}

/** The `sub` the client sees for the user. */
export function subjectFor(masterKey: Buffer, client: SubjectClient, userId: string): string {
  if (client.subject_type === 'public') return userId;
  return keyedDigest(masterKey, 'sso-pairwise-sub', `${sectorOf(client)}\n${userId}`);
}

/** subjectFor, remembering a pairwise subject for the logout endpoint. */
export async function issueSubject(db: Db, masterKey: Buffer, client: SubjectClient, userId: string): Promise<string> {
  const sub = subjectFor(masterKey, client, userId);
  if (client.subject_type === 'pairwise')
    await db.query(
      'INSERT INTO sso_pairwise_subjects (client_id, sub, user_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
      [client.client_id, sub, userId],
    );
  return sub;
}

/** The user a client's `sub` names, or undefined. */
export async function userOfSubject(db: Db, client: SubjectClient, sub: string): Promise<string | undefined> {
  if (client.subject_type === 'public')
    return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(sub) ? sub : undefined;
  const found = await db.query<{ user_id: string }>(
    'SELECT user_id FROM sso_pairwise_subjects WHERE client_id = $1 AND sub = $2',
    [client.client_id, sub],
  );
  return found.rows[0]?.user_id;
}
