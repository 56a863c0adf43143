// Outgoing mail goes through the outbox table first, keyed by the caller's idempotency key, so a retried send never
// writes or sends twice. With SMTP_URL it is sent by nodemailer, and once sent its single-use links are masked in the
// table (the recipient has them; nobody else needs them); without it, it stays whole for GET /admin/mail, the
// development outbox.
import nodemailer, { type Transporter } from 'nodemailer';
import type { Db } from '../db.ts';
import { maskLinks } from '../accounts/tokens.ts';

export interface OutgoingMail {
  /** Chosen by the caller (for example a workflow) so that retries are recognised. */
  key: string;
  to: string;
  subject: string;
  text: string;
}

export interface MailRecord {
  id: string;
  to: string;
  subject: string;
  text: string;
  status: 'outbox' | 'pending' | 'sent' | 'failed';
  attempts: number;
  last_error: string | null;
  created_at: Date;
  sent_at: Date | null;
}

const COLUMNS = `id, recipient AS "to", subject, text_body AS text, status, attempts, last_error, created_at, sent_at`;

const settle = <T>(promise: Promise<T>): Promise<PromiseSettledResult<T>> =>
  promise.then(
    (value) => ({ status: 'fulfilled', value }),
    (reason: unknown) => ({ status: 'rejected', reason }),
  );

export class Mailer {
  private readonly transport: Transporter | undefined;

  constructor(
    private readonly db: Db,
    smtpUrl: string | undefined,
    private readonly from: string,
  ) {
    this.transport = smtpUrl ? nodemailer.createTransport(smtpUrl) : undefined;
  }

  /** Whether mail stays here unsent (no SMTP_URL): the development outbox, the only place its links can be read. */
  get isDevelopmentOutbox(): boolean {
    return this.transport === undefined;
  }

  /** Writes the mail and, with SMTP, sends it; throws when either fails, so the caller tries again with the same key. */
  async send(mail: OutgoingMail): Promise<MailRecord> {
    const [result] = await this.sendAll([mail]);
    if (result.status === 'rejected') throw result.reason;
    return result.value;
  }

  /**
   * send() for many mails: one statement writes them all, and each result says how its own mail fared, so a mail that
   * fails fails alone. Mails to one address are queued, and sent, in the order given.
   */
  async sendAll(mails: readonly OutgoingMail[]): Promise<PromiseSettledResult<MailRecord>[]> {
    const results = await this.write(mails);
    const transport = this.transport;
    if (!transport) return results;
    // Each row once, however often the batch names its key.
    const queues = new Map<string, MailRecord[]>();
    const queued = new Set<string>();
    for (const result of results) {
      if (result.status === 'rejected' || queued.has(result.value.id)) continue;
      const record = result.value;
      if (record.status === 'sent' || record.status === 'outbox') continue;
      queued.add(record.id);
      const address = record.to.toLowerCase();
      queues.set(address, [...(queues.get(address) ?? []), record]);
    }
    // Addresses side by side: an SMTP round trip each, and one slow recipient's server holds up only its own mails.
    const delivered = new Map<string, PromiseSettledResult<MailRecord>>();
    await Promise.all(
      [...queues.values()].map(async (records) => {
        for (const record of records) delivered.set(record.id, await settle(this.deliver(transport, record)));
      }),
    );
    return results.map((result) => (result.status === 'fulfilled' && delivered.get(result.value.id)) || result);
  }

  /** The mails' rows, new or as an earlier send of their keys left them. */
  private async write(mails: readonly OutgoingMail[]): Promise<PromiseSettledResult<MailRecord>[]> {
    if (mails.length === 0) return [];
    let records: Map<string, MailRecord>;
    try {
      records = await this.writeRows(mails);
    } catch (error) {
      if (mails.length === 1) return [{ status: 'rejected', reason: error }];
      // One row the database refuses fails the statement for all: written one by one, it fails alone. In turn, so
      // mails to one address keep their order.
      const results: PromiseSettledResult<MailRecord>[] = [];
      for (const mail of mails) results.push(...(await this.write([mail])));
      return results;
    }
    return mails.map((mail) => ({ status: 'fulfilled', value: records.get(mail.key)! }));
  }

  private async writeRows(mails: readonly OutgoingMail[]): Promise<Map<string, MailRecord>> {
    const keys = mails.map((mail) => mail.key);
    // One round trip: the new rows, and the ones earlier sends of these keys made (the outer SELECT sees the table as
    // it was before the INSERT). Rows of one statement share now(): a microsecond apart, they list in the order given.
    const written = await this.db.query<MailRecord & { key: string }>(
      `WITH given AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS g(key, recipient, subject, text_body, n)),
       made AS (
         INSERT INTO mail_outbox (idempotency_key, recipient, subject, text_body, status, created_at)
         SELECT key, recipient, subject, text_body, $5, now() + n * interval '1 microsecond' FROM given
         ON CONFLICT (idempotency_key) DO NOTHING RETURNING idempotency_key AS key, ${COLUMNS})
       SELECT * FROM made
       UNION ALL
       SELECT idempotency_key, ${COLUMNS} FROM mail_outbox WHERE idempotency_key IN (SELECT key FROM given)`,
      [
        keys,
        mails.map((mail) => mail.to),
        mails.map((mail) => mail.subject),
        mails.map((mail) => mail.text),
        this.transport ? 'pending' : 'outbox',
      ],
    );
    const records = new Map(written.rows.map(({ key, ...record }) => [key, record]));
    // A send of the same key that another transaction was committing at that moment is not in the statement's
    // snapshot: those are read once more.
    const missing = keys.filter((key) => !records.has(key));
    if (missing.length > 0) {
      const reread = await this.db.query<MailRecord & { key: string }>(
        `SELECT idempotency_key AS key, ${COLUMNS} FROM mail_outbox WHERE idempotency_key = ANY($1::text[])`,
        [missing],
      );
      for (const { key, ...record } of reread.rows) records.set(key, record);
    }
    return records;
  }

  /** Sends a written mail through SMTP and records how it went; throws when it was not sent. */
  private async deliver(transport: Transporter, record: MailRecord): Promise<MailRecord> {
    try {
      await transport.sendMail({
        from: this.from,
        to: record.to,
        subject: record.subject,
        text: record.text,
        messageId: `<${record.id}@svc.mail>`,
      });
    } catch (error) {
      await this.db.query(
        `UPDATE mail_outbox SET status = 'failed', attempts = attempts + 1, last_error = $2 WHERE id = $1`,
        [record.id, (error as Error).message],
      );
      throw error;
    }
    const sent = await this.db.query<MailRecord>(
      `UPDATE mail_outbox SET status = 'sent', attempts = attempts + 1, last_error = NULL, sent_at = now(), text_body = $2
        WHERE id = $1 RETURNING ${COLUMNS}`,
      [record.id, maskLinks(record.text)],
    );
    return sent.rows[0];
  }

  /** Newest first, optionally only to one address (any case), older than the mail `startingAfter` names. */
  async list(options: { to?: string; limit: number; startingAfter?: string }): Promise<MailRecord[]> {
    const result = await this.db.query<MailRecord>(
      `SELECT ${COLUMNS} FROM mail_outbox WHERE ($1::text IS NULL OR lower(recipient) = lower($1))
          AND ($3::uuid IS NULL OR (created_at, id) < (SELECT created_at, id FROM mail_outbox WHERE id = $3))
        ORDER BY created_at DESC, id DESC LIMIT $2`,
      [options.to ?? null, options.limit, options.startingAfter ?? null],
    );
    return result.rows;
  }

  close(): void {
    this.transport?.close();
  }
}
