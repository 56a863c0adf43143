// Accounts: users (the svc ID is their UUID), organizations and memberships. Every user has a personal organization.
import { z } from 'zod';
import { inTransaction, type Db, type DbClient } from '../db.ts';
import { hashPassword } from './passwords.ts';

// Not trimmed: JSON Schema's `format: email` refuses padding, so the server does too (the document and it agree).
// RFC 5321's limits, which `format: email` validators apply: a local part of 64 octets, labels of 63.
export const EmailSchema = z
  .email({ message: 'must be an e-mail address' })
  .max(254)
  .refine((email) => {
    const [local = '', domain = ''] = email.split('@');
    return local.length <= 64 && domain.split('.').every((label) => label.length <= 63);
  }, 'must be an e-mail address (at most 64 characters before the @ and 63 in each part of the domain)');

/** The longest name a person may give themselves. */
export const NAME_MAX = 200;

export interface User {
  id: string;
  email: string;
  name: string;
  /** The language of the user's mail and, once chosen in the profile, of their pages. */
  locale: 'ru' | 'en';
  /** The IANA time zone the person's times are shown in; null: Moscow time (READER_TIME_ZONE). */
  time_zone: string | null;
  created_at: Date;
}

export interface Organization {
  id: string;
  name: string;
  personal: boolean;
}

const USER_COLUMNS = 'id, email, name, locale, time_zone, created_at';

/**
 * The user with this e-mail (any case), made with a personal organization when there is none. Safe under concurrency:
 * the unique index on lower(email) decides, and the loser reads the winner's committed row.
 */
export async function ensureUser(
  db: Db,
  input: { email: string; name?: string },
): Promise<{ user: User; created: boolean }> {
  // Most calls find a user who exists already: one query, no transaction.
  const existing = await findUserByEmail(db, input.email);
  if (existing) return { user: existing, created: false };
  return inTransaction(db, async (client) => {
    const inserted = await client.query<User>(
      `INSERT INTO users (email, name) VALUES ($1, $2) ON CONFLICT ((lower(email))) DO NOTHING RETURNING ${USER_COLUMNS}`,
      [input.email, input.name ?? ''],
    );
    const user = inserted.rows[0];
    if (!user) return { user: (await findUserByEmail(client, input.email))!, created: false };
    const org = await client.query<{ id: string }>(
      `INSERT INTO organizations (name, personal, owner_id) VALUES ($1, true, $2) RETURNING id`,
      [personalOrganizationName(user), user.id],
    );
    await client.query(`INSERT INTO memberships (user_id, organization_id, role) VALUES ($1, $2, 'owner')`, [
      user.id,
      org.rows[0].id,
    ]);
    return { user, created: true };
  });
}

export async function findUserByEmail(db: DbClient, email: string): Promise<User | undefined> {
  const result = await db.query<User>(`SELECT ${USER_COLUMNS} FROM users WHERE lower(email) = lower($1)`, [email]);
  return result.rows[0];
}

export async function findUserById(db: DbClient, id: string): Promise<User | undefined> {
  const result = await db.query<User>(`SELECT ${USER_COLUMNS} FROM users WHERE id = $1`, [id]);
  return result.rows[0];
}

export async function personalOrganization(db: DbClient, userId: string): Promise<Organization | undefined> {
  const result = await db.query<Organization>(
    'SELECT id, name, personal FROM organizations WHERE owner_id = $1 AND personal',
    [userId],
  );
  return result.rows[0];
}

export async function setPassword(db: DbClient, userId: string, password: string): Promise<void> {
  await db.query('UPDATE users SET password_hash = $2, updated_at = now() WHERE id = $1', [
    userId,
    await hashPassword(password),
  ]);
}

function personalOrganizationName(user: { name: string; email: string }): string {
  return user.name.trim() || user.email;
}

/**
 * Changes the name and the language. A personal organization still named as it was made (after the old name, or the
 * address) follows the new name; one its owner renamed keeps its name.
 */
export async function updateProfile(
  db: Db,
  user: User,
  changes: { name?: string; locale?: 'ru' | 'en'; time_zone?: string | null },
): Promise<User> {
  return inTransaction(db, async (client) => {
    const updated = await client.query<User>(
      // A language set here is the person's own choice: a deal's or an invitation's language no longer replaces it.
      // A time zone given as null goes back to Moscow time; one left out stays.
      `UPDATE users SET name = coalesce($2, name), locale = coalesce($3, locale),
              locale_chosen = locale_chosen OR $3::text IS NOT NULL,
              time_zone = CASE WHEN $4 THEN $5 ELSE time_zone END, updated_at = now() WHERE id = $1
       RETURNING ${USER_COLUMNS}`,
      [
        user.id,
        changes.name ?? null,
        changes.locale ?? null,
        changes.time_zone !== undefined,
        changes.time_zone ?? null,
      ],
    );
    const after = updated.rows[0];
    if (changes.name !== undefined) {
      await client.query('UPDATE organizations SET name = $3 WHERE owner_id = $1 AND personal AND name = $2', [
        user.id,
        personalOrganizationName(user),
        personalOrganizationName(after),
      ]);
    }
    return after;
  });
}

/**
 * The language a marketplace (buyer_locale, seller_locale) or an administrator's invitation gives for this person:
 * taken unless the person chose one themselves (the profile, a page's language switch, their own sign-up).
 */
export async function followLocale(db: DbClient, userId: string, locale: 'ru' | 'en'): Promise<void> {
  await db.query(
    'UPDATE users SET locale = $2, updated_at = now() WHERE id = $1 AND NOT locale_chosen AND locale <> $2',
    [userId, locale],
  );
}

/** The language the person chose themselves (a page's language switch): written only when it changes something. */
export async function chooseLocale(db: DbClient, userId: string, locale: 'ru' | 'en'): Promise<void> {
  await db.query(
    `UPDATE users SET locale = $2, locale_chosen = true, updated_at = now()
      WHERE id = $1 AND (locale <> $2 OR NOT locale_chosen)`,
    [userId, locale],
  );
}

/** The language the person chose themselves, or undefined when they never did. */
export async function chosenLocale(db: DbClient, userId: string): Promise<'ru' | 'en' | undefined> {
  const result = await db.query<{ locale: 'ru' | 'en' }>('SELECT locale FROM users WHERE id = $1 AND locale_chosen', [
    userId,
  ]);
  return result.rows[0]?.locale;
}

/** The user and their password hash, for signing in. */
export async function findLogin(
  db: DbClient,
  email: string,
): Promise<{ id: string; password_hash: string | null } | undefined> {
  const result = await db.query<{ id: string; password_hash: string | null }>(
    'SELECT id, password_hash FROM users WHERE lower(email) = lower($1)',
    [email],
  );
  return result.rows[0];
}

/** What a mail to an address needs: the user's name, language, and whether they can sign in yet. */
export interface MailRecipient {
  id: string;
  name: string;
  locale: 'ru' | 'en';
  time_zone: string | null;
  has_password: boolean;
}

const MAIL_RECIPIENT_COLUMNS = 'id, name, locale, time_zone, password_hash IS NOT NULL AS has_password';

/** The account of an address (in any case), as a mail to it needs it; undefined while nobody has the address. */
export async function findMailRecipient(db: DbClient, email: string): Promise<MailRecipient | undefined> {
  const result = await db.query<MailRecipient>(
    `SELECT ${MAIL_RECIPIENT_COLUMNS} FROM users WHERE lower(email) = lower($1)`,
    [email],
  );
  return result.rows[0];
}

/**
 * findMailRecipient for several addresses at once, as an SQL subquery over `emails` (SQL expressions, e.g. columns of
 * the statement it is part of): a JSON array of MailRecipient, each with its `address` in lower case. A statement that
 * reads many mails' facts reads their recipients too, without a round trip per address.
 */
export const mailRecipientsSql = (emails: readonly string[]): string =>
  `(SELECT coalesce(json_agg(r), '[]') FROM (SELECT lower(email) AS address, ${MAIL_RECIPIENT_COLUMNS} FROM users
     WHERE lower(email) IN (${emails.map((email) => `lower(${email})`).join(', ')})) r)`;
