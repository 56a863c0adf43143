// The mail activity: workflows send mail through the outbox; the key they pass makes retries harmless.
import type { Mailer, OutgoingMail } from '../src/mail/outbox.ts';

export function createMailActivities(mailer: Mailer) {
  return {
    async sendMail(mail: OutgoingMail): Promise<{ id: string; status: string }> {
      const record = await mailer.send(mail);
      return { id: record.id, status: record.status };
    },
  };
}
