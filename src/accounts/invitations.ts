// Invitations: a user made by a deal gets one link to set a password. The token is the invitation id plus a digest
// keyed with the master key, so nothing secret is stored and a retried mail carries the same link.
import type { Db, DbClient } from '../db.ts';
import { keyedDigest, safeEqual } from '../secrets.ts';

const INVITATION_TTL_DAYS = 14;
const PURPOSE = 'invitation';

export function invitationToken(masterKey: Buffer, invitationId: string): string {
  return `inv_${invitationId}.${keyedDigest(masterKey, PURPOSE, invitationId)}`;
}

/** The invitation of a user who has no password yet, made once; undefined when they can already sign in. */
export async function ensureInvitation(db: DbClient, userId: string): Promise<{ id: string } | undefined> {
  await db.query(
    `INSERT INTO invitations (user_id) SELECT id FROM users WHERE id = $1 AND password_hash IS NULL
     ON CONFLICT (user_id) DO NOTHING`,
    [userId],
  );
  const result = await db.query<{ id: string }>(
    `SELECT i.id FROM invitations i JOIN users u ON u.id = i.user_id
      WHERE i.user_id = $1 AND i.accepted_at IS NULL AND u.password_hash IS NULL`,
    [userId],
  );
  return result.rows[0];
}

/** The invitation id the token carries, when its digest is genuine. */
function invitationId(masterKey: Buffer, token: string): string | undefined {
  const match = /^inv_([0-9a-f-]{36})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match) return undefined;
  const [, id, digest] = match as unknown as [string, string, string];
  return safeEqual(Buffer.from(digest), Buffer.from(keyedDigest(masterKey, PURPOSE, id))) ? id : undefined;
}

/**
 * The user's invitation made fresh (its 14 days start again) for a mail sent once more; undefined when the user can
 * already sign in. The link stays the same: the token names the invitation, not its age.
 */
export async function renewInvitation(db: DbClient, userId: string): Promise<{ id: string } | undefined> {
  const invitation = await ensureInvitation(db, userId);
  if (invitation) await db.query('UPDATE invitations SET created_at = now() WHERE id = $1', [invitation.id]);
  return invitation;
}

/** Whether the token is genuine, unused and fresh, without using it: the invitation page checks before asking for a password. */
export async function invitationUsable(db: Db, masterKey: Buffer, token: string): Promise<boolean> {
  const id = invitationId(masterKey, token);
  if (!id) return false;
  const result = await db.query(
    'SELECT 1 FROM invitations WHERE id = $1 AND accepted_at IS NULL AND created_at > now() - make_interval(days => $2)',
    [id, INVITATION_TTL_DAYS],
  );
  return result.rowCount === 1;
}

/** The user the token invites, if it is genuine, unused and fresh; marks it used in the same statement. */
export async function consumeInvitation(db: Db, masterKey: Buffer, token: string): Promise<string | undefined> {
  const id = invitationId(masterKey, token);
  if (!id) return undefined;
  const result = await db.query<{ user_id: string }>(
    `UPDATE invitations SET accepted_at = now()
      WHERE id = $1 AND accepted_at IS NULL AND created_at > now() - make_interval(days => $2)
      RETURNING user_id`,
    [id, INVITATION_TTL_DAYS],
  );
  return result.rows[0]?.user_id;
}
