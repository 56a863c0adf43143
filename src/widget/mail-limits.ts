// How often mails that an anonymous caller can cause reach one address. The widget's creation takes only the public
// key, so anyone can make a deal that names a stranger as its buyer or seller; without a limit the service would mail
// them as often as it is asked, with a title the caller wrote. A widget deal's invitation or new-deal mail and its
// approval request each take a slot; one address gets at most WIDGET_MAIL_LIMIT of them an hour from one marketplace.
// Decided once per deal, recipient and kind (a row in widget_deal_mail), so a retried activity sends what was decided.
import type { DbClient, Db } from '../db.ts';
import { inTransaction } from '../db.ts';
import { hashSecret } from '../secrets.ts';

export const WIDGET_MAIL_LIMIT = { perRecipient: 3, windowSeconds: 3600 } as const;

export type WidgetMailKind = 'created' | 'approval';

/** No address typed by a stranger is stored: the limit counts by a hash of the address in any case. */
const recipientHash = (email: string) => hashSecret(email.trim().toLowerCase());

/**
 * Takes (or refuses) this deal's slot of `kind` for each address, once: a repeat answers the first decision. Two
 * creations for one address at once wait for each other, so never more than the limit pass.
 */
export async function decideWidgetMail(
  db: Db,
  deal: { marketplaceId: string; externalId: string },
  kind: WidgetMailKind,
  emails: readonly string[],
): Promise<Map<string, boolean>> {
  const decided = new Map<string, boolean>();
  for (const email of new Set(emails.map((address) => address.trim().toLowerCase()))) {
    decided.set(
      email,
      await inTransaction(db, async (client) => {
        const hash = recipientHash(email);
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
          `widget-mail:${deal.marketplaceId}:${hash.toString('base64url')}`,
        ]);
        const result = await client.query<{ allowed: boolean }>(
          `WITH recent AS (
             SELECT count(*) AS n FROM widget_deal_mail
              WHERE marketplace_id = $1 AND recipient_hash = $3 AND allowed AND decided_at > now() - make_interval(secs => $6)
           ), inserted AS (
             INSERT INTO widget_deal_mail (marketplace_id, external_id, recipient_hash, kind, allowed)
             SELECT $1, $2, $3, $4, n < $5 FROM recent
             ON CONFLICT (marketplace_id, external_id, recipient_hash, kind) DO NOTHING
             RETURNING allowed
           )
           SELECT allowed FROM inserted
           UNION ALL
           SELECT allowed FROM widget_deal_mail WHERE marketplace_id = $1 AND external_id = $2 AND recipient_hash = $3 AND kind = $4
           LIMIT 1`,
          [
            deal.marketplaceId,
            deal.externalId,
            hash,
            kind,
            WIDGET_MAIL_LIMIT.perRecipient,
            WIDGET_MAIL_LIMIT.windowSeconds,
          ],
        );
        return result.rows[0].allowed;
      }),
    );
  }
  if (Math.random() < 0.01)
    await db.query(`DELETE FROM widget_deal_mail WHERE decided_at < now() - interval '7 days'`).catch(() => {});
  return decided;
}

/**
 * Whether the deal was made through the widget (its creation decided its parties' mail), as an SQL condition on the
 * deal's marketplace and external id: a statement that reads many deals asks it of each without a round trip per deal.
 */
export const widgetDealSql = (marketplaceId: string, externalId: string): string =>
  `EXISTS (SELECT 1 FROM widget_deal_mail WHERE marketplace_id = ${marketplaceId} AND external_id = ${externalId} AND kind = 'created')`;

/** Whether the deal was made through the widget: its creation decided its parties' mail. */
export async function isWidgetDeal(
  db: DbClient,
  deal: { marketplace_id: string; external_id: string },
): Promise<boolean> {
  const result = await db.query<{ widget: boolean }>(`SELECT ${widgetDealSql('$1', '$2')} AS widget`, [
    deal.marketplace_id,
    deal.external_id,
  ]);
  return result.rows[0].widget;
}

/**
 * Whether a mail of `kind` about this deal may go to `email`: always for a deal made by a marketplace's server; for a
 * widget deal, the creation's decision (`created`) or a slot taken now (`approval`).
 */
export async function widgetMailAllowed(
  db: Db,
  deal: { marketplace_id: string; external_id: string },
  kind: WidgetMailKind,
  email: string,
): Promise<boolean> {
  return !(await isWidgetDeal(db, deal)) || widgetDealMailAllowed(db, deal, kind, email);
}

/** widgetMailAllowed for a deal already known to be made through the widget (widgetDealSql). */
export async function widgetDealMailAllowed(
  db: Db,
  deal: { marketplace_id: string; external_id: string },
  kind: WidgetMailKind,
  email: string,
): Promise<boolean> {
  if (kind === 'approval') {
    return (
      await decideWidgetMail(db, { marketplaceId: deal.marketplace_id, externalId: deal.external_id }, 'approval', [
        email,
      ])
    ).get(email.trim().toLowerCase())!;
  }
  const result = await db.query<{ allowed: boolean }>(
    `SELECT allowed FROM widget_deal_mail WHERE marketplace_id = $1 AND external_id = $2 AND recipient_hash = $3 AND kind = 'created'`,
    [deal.marketplace_id, deal.external_id, recipientHash(email)],
  );
  // A party the creation did not name (an approver added later by the marketplace) is not the anonymous caller's doing.
  return result.rows[0]?.allowed ?? true;
}
