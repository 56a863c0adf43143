// Whether a widget deal creation makes the buyer an account invitation, so the widget says "we sent an invitation"
// only when a mail goes. The deal's workflow provisions the parties after the creation answers (activities/deals.ts:
// provision → ensureInvitation, one invitation per user, its mail keyed by the invitation so it goes once), so the
// answer is read before the deal is made: a buyer unknown to us, or known without a password and never invited, gets
// one; a buyer who can sign in, or who was invited already (by an earlier deal), gets no new one.
import type { DbClient } from '../db.ts';

export async function buyerGetsInvitation(db: DbClient, email: string): Promise<boolean> {
  const result = await db.query<{ invited: boolean }>(
    `SELECT u.password_hash IS NULL AND NOT EXISTS (SELECT 1 FROM account_tokens i WHERE i.user_id = u.id AND i.purpose = 'invitation') AS invited
       FROM users u WHERE lower(u.email) = lower($1)`,
    [email],
  );
  return result.rows[0]?.invited ?? true;
}
