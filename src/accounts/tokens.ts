// The one link mechanism for invitations, password resets and sign-up confirmations: single-use, expiring and bound
// to its purpose. A token is a prefix, the row's id and an HMAC of "purpose:id" keyed with the master key, so nothing
// secret is stored, a retried mail carries the same link, and a token of one purpose never passes as another's.
import type { Db, DbClient } from '../db.ts';
import { keyedDigest, safeEqual } from '../secrets.ts';
import { isUuid } from '../uuid.ts';

export type TokenPurpose = 'invitation' | 'password_reset' | 'signup' | 'admin_setup';

const PREFIX: Record<TokenPurpose, string> = {
  invitation: 'inv_',
  password_reset: 'rst_',
  signup: 'sup_',
  admin_setup: 'ads_',
};
export const TOKEN_TTL_SECONDS: Record<TokenPurpose, number> = {
  invitation: 14 * 24 * 3600,
  password_reset: 3600,
  signup: 24 * 3600,
  admin_setup: 3 * 24 * 3600,
};

export interface TokenRow {
  id: string;
  user_id: string | null;
  email: string | null;
  data: Record<string, unknown>;
}

export function tokenFor(masterKey: Buffer, purpose: TokenPurpose, id: string): string {
  return `${PREFIX[purpose]}${id}.${keyedDigest(masterKey, purpose, id)}`;
}

export const invitationToken = (masterKey: Buffer, id: string): string => tokenFor(masterKey, 'invitation', id);

const LINK_TOKEN = new RegExp(`\\b(${Object.values(PREFIX).join('|')})[0-9a-f-]{36}\\.[A-Za-z0-9_-]{43}`, 'g');
const TOKEN_PARAMETER = /([?&]token=)([a-z]+_)?[^\s&#]*/g;

/**
 * The text with every single-use link token masked to its prefix and "…" (`inv_…`): what an operator may read of a
 * mail. Any `token=` parameter is masked too, so a link of a kind added later is not shown by mistake.
 */
export function maskLinks(text: string): string {
  return text.replace(LINK_TOKEN, '$1…').replace(TOKEN_PARAMETER, '$1$2…');
}

/** The id the token carries, when it is of this purpose and its digest is genuine. */
function tokenId(masterKey: Buffer, purpose: TokenPurpose, token: string): string | undefined {
  const match = /^([a-z]+_)([^.]+)\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match || match[1] !== PREFIX[purpose]) return undefined;
  const [, , id, digest] = match as unknown as [string, string, string, string];
  if (!isUuid(id)) return undefined;
  return safeEqual(Buffer.from(digest), Buffer.from(keyedDigest(masterKey, purpose, id))) ? id : undefined;
}

/** A new link of this purpose, for a user or (a sign-up) an address not yet an account. */
export async function issueToken(
  db: DbClient,
  masterKey: Buffer,
  purpose: Exclude<TokenPurpose, 'invitation'>,
  subject: { userId?: string; email?: string; data?: Record<string, unknown> },
): Promise<{ id: string; token: string }> {
  const result = await db.query<{ id: string }>(
    `INSERT INTO account_tokens (purpose, user_id, email, data, expires_at)
     VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5)) RETURNING id`,
    [purpose, subject.userId ?? null, subject.email ?? null, subject.data ?? {}, TOKEN_TTL_SECONDS[purpose]],
  );
  // Now and then, drop links long dead; invitations stay, since whether someone was ever invited matters.
  if (Math.random() < 0.01) {
    await db
      .query(`DELETE FROM account_tokens WHERE purpose <> 'invitation' AND expires_at < now() - interval '1 day'`)
      .catch(() => {});
  }
  const id = result.rows[0].id;
  return { id, token: tokenFor(masterKey, purpose, id) };
}

/** The invitation of a user who has no password yet, made once; undefined when they can already sign in. */
export async function ensureInvitation(db: DbClient, userId: string): Promise<{ id: string } | undefined> {
  await db.query(
    `INSERT INTO account_tokens (purpose, user_id, expires_at)
     SELECT 'invitation', id, now() + make_interval(secs => $2) FROM users WHERE id = $1 AND password_hash IS NULL
     ON CONFLICT (user_id) WHERE purpose = 'invitation' DO NOTHING`,
    [userId, TOKEN_TTL_SECONDS.invitation],
  );
  const result = await db.query<{ id: string }>(
    `SELECT t.id FROM account_tokens t JOIN users u ON u.id = t.user_id
      WHERE t.user_id = $1 AND t.purpose = 'invitation' AND t.used_at IS NULL AND u.password_hash IS NULL`,
    [userId],
  );
  return result.rows[0];
}

/**
 * The user's invitation made fresh (its 14 days start again) for a mail sent once more; undefined when the user can
 * already sign in. The link stays the same: the token names the invitation, not its age.
 */
export async function renewInvitation(db: DbClient, userId: string): Promise<{ id: string } | undefined> {
  const invitation = await ensureInvitation(db, userId);
  if (invitation) {
    await db.query(
      'UPDATE account_tokens SET created_at = now(), expires_at = now() + make_interval(secs => $2) WHERE id = $1',
      [invitation.id, TOKEN_TTL_SECONDS.invitation],
    );
  }
  return invitation;
}

/** Whether the token is genuine, unused and fresh, without using it: a page checks before asking for a password. */
export async function tokenUsable(db: Db, masterKey: Buffer, purpose: TokenPurpose, token: string): Promise<boolean> {
  const id = tokenId(masterKey, purpose, token);
  if (!id) return false;
  const result = await db.query(
    'SELECT 1 FROM account_tokens WHERE id = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > now()',
    [id, purpose],
  );
  return result.rowCount === 1;
}

/** The user a genuine, unused and fresh token is for (the invitation page names their deal), without using it. */
export async function tokenUserId(
  db: Db,
  masterKey: Buffer,
  purpose: TokenPurpose,
  token: string,
): Promise<string | undefined> {
  const id = tokenId(masterKey, purpose, token);
  if (!id) return undefined;
  const result = await db.query<{ user_id: string | null }>(
    'SELECT user_id FROM account_tokens WHERE id = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > now()',
    [id, purpose],
  );
  return result.rows[0]?.user_id ?? undefined;
}

/** The token's row if it is genuine, unused and fresh; marked used in the same statement, so it works once. */
export async function consumeToken(
  db: DbClient,
  masterKey: Buffer,
  purpose: TokenPurpose,
  token: string,
): Promise<TokenRow | undefined> {
  const id = tokenId(masterKey, purpose, token);
  if (!id) return undefined;
  const result = await db.query<TokenRow>(
    `UPDATE account_tokens SET used_at = now()
      WHERE id = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > now()
      RETURNING id, user_id, email, data`,
    [id, purpose],
  );
  return result.rows[0];
}

/** Once a password is set, links mailed earlier to set one (an invitation, other resets) stop working. */
export async function spendPasswordLinks(db: DbClient, userId: string): Promise<void> {
  await db.query(
    `UPDATE account_tokens SET used_at = now() WHERE user_id = $1 AND purpose IN ('invitation', 'password_reset') AND used_at IS NULL`,
    [userId],
  );
}
