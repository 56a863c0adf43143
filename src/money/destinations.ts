// Where a seller is paid: their own payout destination (set in the cabinet), or one the marketplace gives for a single
// deal, which comes first. The token is a secret (a card synonym from YooKassa's payout widget, a YooMoney wallet, a
// sandbox test card): it is stored encrypted with the master key, read only by the payout activity, and never enters
// the deal's workflow history, a page or a log; pages show the title ("Test card •••• 1111").
import { z } from 'zod';
import type { DbClient } from '../db.ts';
import { decryptSecret, encryptSecret } from '../secrets.ts';
import { SANDBOX_TEST_CARDS } from '../escrow/sandbox.ts';
import type { PayoutDestination } from '../escrow/provider.ts';

export const DESTINATION_TYPES = ['test_card', 'bank_card', 'yoo_money'] as const;

export const PayoutDestinationInput = z
  .object({
    type: z
      .enum(DESTINATION_TYPES)
      .describe(
        '`test_card` in sandbox mode; live: `bank_card` (a synonym from YooKassa’s payout widget) or `yoo_money`',
      ),
    token: z
      .string()
      .min(1)
      .max(200)
      .describe('The card synonym, the wallet number, or the sandbox test card number (secret: never shown again)'),
  })
  .meta({ title: 'PayoutDestinationInput' });
export type PayoutDestinationInput = z.infer<typeof PayoutDestinationInput>;

/** Why this destination cannot take the marketplace's payouts, or undefined. */
export function destinationRefusal(mode: 'sandbox' | 'live', input: PayoutDestinationInput): string | undefined {
  if (mode === 'sandbox') {
    if (input.type !== 'test_card') return 'A sandbox deal pays out to a test card only (type test_card).';
    if (!(input.token in SANDBOX_TEST_CARDS))
      return 'Use a sandbox test card: 4111111111111111 (the payout succeeds) or 4000000000000002 (it is declined).';
    return undefined;
  }
  if (input.type === 'test_card')
    return 'Test cards are for sandbox deals; a live payout goes to a card through YooKassa’s payout widget or to a YooMoney wallet.';
  if (input.type === 'yoo_money' && !/^\d{11,20}$/.test(input.token))
    return 'A YooMoney wallet number has 11 to 20 digits.';
  if (input.type === 'bank_card' && !/^[A-Za-z0-9._-]{8,200}$/.test(input.token))
    return 'A card is given as the synonym YooKassa’s payout widget returns (payout_token).';
  return undefined;
}

/** What pages show of a destination: its kind and the last four characters. */
export function destinationTitle(input: PayoutDestinationInput, locale: 'en' | 'ru' = 'en'): string {
  const last = input.token.slice(-4);
  const kind = {
    en: { test_card: 'Test card', bank_card: 'Card', yoo_money: 'YooMoney wallet' },
    ru: { test_card: 'Тестовая карта', bank_card: 'Карта', yoo_money: 'Кошелёк ЮMoney' },
  }[locale][input.type];
  return `${kind} •••• ${last}`;
}

export interface StoredDestination {
  type: PayoutDestinationInput['type'];
  title: string;
  updated_at: string;
}

/** The seller's own destination, for every deal they sell in. */
export async function setSellerDestination(
  db: DbClient,
  masterKey: Buffer,
  userId: string,
  input: PayoutDestinationInput,
): Promise<StoredDestination> {
  const row = await db.query<StoredDestination>(
    `INSERT INTO payout_destinations (user_id, type, token_encrypted, title) VALUES ($1, $2, $3, $4)
     ON CONFLICT (user_id) DO UPDATE SET type = excluded.type, token_encrypted = excluded.token_encrypted, title = excluded.title, updated_at = now()
     RETURNING type, title, updated_at`,
    [userId, input.type, encryptSecret(masterKey, input.token), destinationTitle(input)],
  );
  return stored(row.rows[0]);
}

/** The row as pages show it (PostgreSQL's timestamp as ISO 8601). */
const stored = (row: StoredDestination): StoredDestination => ({
  ...row,
  updated_at: new Date(row.updated_at).toISOString(),
});

/** The marketplace's destination for one deal: it comes before the seller's own. */
export async function setDealDestination(
  db: DbClient,
  masterKey: Buffer,
  dealId: string,
  input: PayoutDestinationInput,
): Promise<StoredDestination> {
  const row = await db.query<StoredDestination>(
    `INSERT INTO deal_payout_destinations (deal_id, type, token_encrypted, title) VALUES ($1, $2, $3, $4)
     ON CONFLICT (deal_id) DO UPDATE SET type = excluded.type, token_encrypted = excluded.token_encrypted, title = excluded.title, updated_at = now()
     RETURNING type, title, updated_at`,
    [dealId, input.type, encryptSecret(masterKey, input.token), destinationTitle(input)],
  );
  return stored(row.rows[0]);
}

export async function sellerDestination(db: DbClient, userId: string): Promise<StoredDestination | undefined> {
  const row = (
    await db.query<StoredDestination>('SELECT type, title, updated_at FROM payout_destinations WHERE user_id = $1', [
      userId,
    ])
  ).rows[0];
  return row && stored(row);
}

/** Where a deal's payout goes now: the deal's own destination, else its seller's; undefined while there is none. */
export async function destinationForDeal(
  db: DbClient,
  masterKey: Buffer,
  dealId: string,
): Promise<(PayoutDestination & { title: string }) | undefined> {
  const row = (
    await db.query<{ type: PayoutDestination['type']; token_encrypted: string; title: string }>(
      `SELECT 1 AS rank, type, token_encrypted, title FROM deal_payout_destinations WHERE deal_id = $1
       UNION ALL
       SELECT 2, p.type, p.token_encrypted, p.title FROM deals d JOIN payout_destinations p ON p.user_id = d.seller_id WHERE d.id = $1
       ORDER BY rank LIMIT 1`,
      [dealId],
    )
  ).rows[0];
  return row ? { type: row.type, token: decryptSecret(masterKey, row.token_encrypted), title: row.title } : undefined;
}

/**
 * The destination of one payout: the one it was first sent to, or the deal's now (`fallback` when it has none), which
 * becomes the payout's for every retry. Undefined while there is no destination at all.
 */
export async function destinationForPayout(
  db: DbClient,
  masterKey: Buffer,
  dealId: string,
  payoutId: string,
  fallback?: () => Promise<(PayoutDestination & { title: string }) | undefined>,
): Promise<(PayoutDestination & { title: string }) | undefined> {
  const bound = async () =>
    (
      await db.query<{ type: PayoutDestination['type']; token_encrypted: string; title: string }>(
        'SELECT type, token_encrypted, title FROM payout_destination_uses WHERE payout_id = $1',
        [payoutId],
      )
    ).rows[0];
  let row = await bound();
  if (!row) {
    const now = (await destinationForDeal(db, masterKey, dealId)) ?? (await fallback?.());
    if (!now) return undefined;
    await db.query(
      `INSERT INTO payout_destination_uses (payout_id, deal_id, type, token_encrypted, title) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (payout_id) DO NOTHING`,
      [payoutId, dealId, now.type, encryptSecret(masterKey, now.token), now.title],
    );
    row = await bound();
  }
  return row && { type: row.type, token: decryptSecret(masterKey, row.token_encrypted), title: row.title };
}
