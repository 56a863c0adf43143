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

  async send(mail: OutgoingMail): Promise<MailRecord> {
    const initialStatus = this.transport ? 'pending' : 'outbox';
    // One round trip: the new row, or the one an earlier send of this key made. A send of the same key that another
    // transaction was committing at that moment is not in this statement's snapshot: then it is read once more.
    const written = await this.db.query<MailRecord>(
      `WITH made AS (
         INSERT INTO mail_outbox (idempotency_key, recipient, subject, text_body, status) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (idempotency_key) DO NOTHING RETURNING ${COLUMNS})
       SELECT * FROM made
       UNION ALL
       SELECT ${COLUMNS} FROM mail_outbox WHERE idempotency_key = $1 AND NOT EXISTS (SELECT 1 FROM made)`,
      [mail.key, mail.to, mail.subject, mail.text, initialStatus],
    );
    const record =
      written.rows[0] ??
      (await this.db.query<MailRecord>(`SELECT ${COLUMNS} FROM mail_outbox WHERE idempotency_key = $1`, [mail.key]))
        .rows[0];
    if (!this.transport || record.status === 'sent' || record.status === 'outbox') return record;
    try {
      await this.transport.sendMail({
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
