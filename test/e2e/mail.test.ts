// The outbox: kept for GET /admin/mail without SMTP_URL, sent through SMTP with it (a local SMTP server stands in
// for the relay), and idempotent by the caller's key either way.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SMTPServer } from 'smtp-server';
import { createDb } from '../../src/db.ts';
import { Mailer } from '../../src/mail/outbox.ts';
import { freePort } from '../../src/dev/ports.ts';
import { json, startTestServer, testConfig, uniqueEmail, uniqueId, type TestServer } from '../helpers.ts';
import { administrator } from '../console-helpers.ts';

interface Received {
  from: string;
  to: string[];
  raw: string;
}

/** `reject`: every mail, or the mails to these addresses. */
async function startSmtpDouble(options: { reject?: boolean | readonly string[] } = {}) {
  const received: Received[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (chunk: Buffer) => (raw += chunk.toString()));
      stream.on('end', () => {
        const to = session.envelope.rcptTo.map((rcpt) => rcpt.address);
        const { reject } = options;
        if (reject === true || (Array.isArray(reject) && to.some((address) => reject.includes(address))))
          return callback(Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }));
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to,
          raw,
        });
        callback();
      });
    },
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const db = createDb(testConfig().DATABASE_URL!);
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
  await db.end();
});

describe('without SMTP_URL', () => {
  it('keeps mail in the outbox and lists it newest first at GET /admin/mail', async () => {
    const to = uniqueEmail('invitee');
    const mailer = new Mailer(db, undefined, 'svc <no-reply@localhost>');
    const first = await mailer.send({ key: uniqueId('mail'), to, subject: 'First', text: 'Hello one' });
    const second = await mailer.send({ key: uniqueId('mail'), to, subject: 'Second', text: 'Hello two' });
    expect(first.status).toBe('outbox');

    const response = await fetch(`${server.url}/admin/mail?to=${encodeURIComponent(to.toUpperCase())}`, {
      headers: { Authorization: `Bearer ${server.adminToken}` },
    });
    expect(response.status).toBe(200);
    const { items } = await json(response);
    expect(items.map((item: { id: string }) => item.id)).toEqual([second.id, first.id]);
    expect(items[0]).toMatchObject({ to, subject: 'Second', text: 'Hello two', status: 'outbox', sent_at: null });
  });

  it('pages the console’s outbox by 50 with the address kept, and says when no mail went to an address', async () => {
    const to = uniqueEmail('paged');
    const mailer = new Mailer(db, undefined, 'svc <no-reply@localhost>');
    for (let n = 1; n <= 51; n += 1) await mailer.send({ key: uniqueId('mail'), to, subject: `Mail ${n}`, text: 'x' });
    const admin = await administrator(server, 'admin');
    const read = async (path: string) =>
      (await fetch(`${server.url}${path}`, { headers: { Cookie: admin.cookie, 'Accept-Language': 'en' } })).text();
    const first = await read(`/admin/view/mail?to=${encodeURIComponent(to)}`);
    expect(first.match(/<details>/g)).toHaveLength(50);
    expect(first).toContain('Mail 51');
    expect(first).not.toContain('Mail 1<');
    const next = /<a rel="next" href="([^"]+)">/.exec(first)![1].replaceAll('&#38;', '&');
    expect(new URL(next, server.url).searchParams.get('to')).toBe(to);
    const second = await read(next);
    expect(second.match(/<details>/g)).toHaveLength(1);
    expect(second).toContain('Mail 1<');
    expect(second).toContain('Page 2');
    const none = await read(`/admin/view/mail?to=${encodeURIComponent(uniqueEmail('nobody'))}`);
    expect(none).toContain('Nothing matches these filters.');
  });

  it('writes a mail once however often it is sent with the same key', async () => {
    const mailer = new Mailer(db, undefined, 'svc <no-reply@localhost>');
    const key = uniqueId('mail');
    const to = uniqueEmail('once');
    const results = await Promise.all(
      Array.from({ length: 5 }, () => mailer.send({ key, to, subject: 'Once', text: 'x' })),
    );
    expect(new Set(results.map((result) => result.id)).size).toBe(1);
    expect((await mailer.list({ to, limit: 10 })).length).toBe(1);
  });

  it('writes a batch in one go, each key once, listed in the order given', async () => {
    const mailer = new Mailer(db, undefined, 'svc <no-reply@localhost>');
    const to = uniqueEmail('batch');
    const other = uniqueEmail('batch-other');
    const earlier = await mailer.send({ key: uniqueId('mail'), to, subject: 'Earlier', text: 'x' });
    const keys = [uniqueId('mail'), uniqueId('mail'), uniqueId('mail')];
    const results = await mailer.sendAll([
      { key: keys[0], to, subject: 'One', text: 'x' },
      { key: keys[1], to: other, subject: 'Two', text: 'x' },
      { key: keys[2], to, subject: 'Three', text: 'x' },
      { key: keys[0], to, subject: 'One again', text: 'x' },
      { key: keys[2], to, subject: 'Three again', text: 'x' },
    ]);
    const records = results.map((result) => (result.status === 'fulfilled' ? result.value : result.reason));
    expect(records.map((record) => record.subject)).toEqual(['One', 'Two', 'Three', 'One', 'Three']);
    expect(records[3].id).toBe(records[0].id);
    // A key an earlier send wrote is answered with its row, not written again.
    const [again] = await mailer.sendAll([{ key: keys[1], to: other, subject: 'Changed', text: 'y' }]);
    expect(again).toEqual({ status: 'fulfilled', value: records[1] });
    expect((await mailer.list({ to, limit: 10 })).map((mail) => mail.subject)).toEqual([
      'Three',
      'One',
      earlier.subject,
    ]);
    expect((await mailer.list({ to: other, limit: 10 })).map((mail) => mail.subject)).toEqual(['Two']);
  });

  it('fails only the mail of a batch that the database refuses, and writes the others', async () => {
    const mailer = new Mailer(db, undefined, 'svc <no-reply@localhost>');
    const to = uniqueEmail('refused-row');
    // PostgreSQL's text holds no NUL: this one row makes the batch's statement fail.
    const [first, refused, last] = await mailer.sendAll([
      { key: uniqueId('mail'), to, subject: 'First', text: 'x' },
      { key: uniqueId('mail'), to, subject: 'Refused', text: 'x\u0000y' },
      { key: uniqueId('mail'), to, subject: 'Last', text: 'x' },
    ]);
    expect(first).toMatchObject({ status: 'fulfilled', value: { subject: 'First' } });
    expect(refused).toMatchObject({ status: 'rejected', reason: expect.objectContaining({ code: '22021' }) });
    expect(last).toMatchObject({ status: 'fulfilled', value: { subject: 'Last' } });
    expect((await mailer.list({ to, limit: 10 })).map((mail) => mail.subject)).toEqual(['Last', 'First']);
  });

  it('requires an administrator token and validates its query', async () => {
    expect((await fetch(`${server.url}/admin/mail`)).status).toBe(401);
    const bad = await fetch(`${server.url}/admin/mail?limit=0`, {
      headers: { Authorization: `Bearer ${server.adminToken}` },
    });
    expect(bad.status).toBe(400);
    expect((await json(bad)).errors[0].path).toBe('limit');
  });
});

describe('with SMTP_URL', () => {
  it('sends through SMTP once and records it as sent', async () => {
    const smtp = await startSmtpDouble();
    const mailer = new Mailer(db, smtp.url, 'svc <no-reply@svc.example>');
    try {
      const to = uniqueEmail('smtp');
      const mail = {
        key: uniqueId('mail'),
        to,
        subject: 'Your invitation',
        text: 'Set a password: https://svc.example/x',
      };
      const sent = await mailer.send(mail);
      expect(sent).toMatchObject({ status: 'sent', attempts: 1, last_error: null });
      expect(sent.sent_at).toBeInstanceOf(Date);
      await mailer.send(mail); // a retry of the same mail
      expect(smtp.received).toHaveLength(1);
      expect(smtp.received[0]).toMatchObject({ from: 'no-reply@svc.example', to: [to] });
      expect(smtp.received[0].raw).toContain('Subject: Your invitation');
      expect(smtp.received[0].raw).toContain('Set a password');
    } finally {
      mailer.close();
      await smtp.close();
    }
  });

  it('records a refused send as failed and throws, so the activity sending it is retried', async () => {
    const smtp = await startSmtpDouble({ reject: true });
    const mailer = new Mailer(db, smtp.url, 'svc <no-reply@svc.example>');
    try {
      const to = uniqueEmail('refused');
      await expect(mailer.send({ key: uniqueId('mail'), to, subject: 'S', text: 'T' })).rejects.toThrow(
        /mailbox unavailable/,
      );
      const [stored] = await new Mailer(db, undefined, 'x <x@x>').list({ to, limit: 1 });
      expect(stored).toMatchObject({
        status: 'failed',
        attempts: 1,
        last_error: expect.stringContaining('mailbox unavailable'),
      });
    } finally {
      mailer.close();
      await smtp.close();
    }
  });

  it('sends a batch each address’s mails in order, and fails only the mails an address refuses', async () => {
    const refusing = uniqueEmail('refusing');
    const smtp = await startSmtpDouble({ reject: [refusing] });
    const mailer = new Mailer(db, smtp.url, 'svc <no-reply@svc.example>');
    try {
      const [anna, boris] = [uniqueEmail('anna'), uniqueEmail('boris')];
      const mails = [
        { key: uniqueId('mail'), to: anna, subject: 'Anna 1', text: 'x' },
        { key: uniqueId('mail'), to: refusing, subject: 'Refused', text: 'x' },
        { key: uniqueId('mail'), to: boris, subject: 'Boris 1', text: 'x' },
        { key: uniqueId('mail'), to: anna, subject: 'Anna 2', text: 'x' },
        { key: uniqueId('mail'), to: anna, subject: 'Anna 3', text: 'x' },
      ];
      // Anna's first mail named twice, as a notice drained twice in one batch would.
      const results = await mailer.sendAll([...mails, mails[0]]);
      expect(results.map((result) => result.status)).toEqual([
        'fulfilled',
        'rejected',
        'fulfilled',
        'fulfilled',
        'fulfilled',
        'fulfilled',
      ]);
      expect(results[5]).toEqual(results[0]);
      expect(results[0]).toMatchObject({ value: { status: 'sent', attempts: 1 } });
      const subjects = (address: string) =>
        smtp.received.filter((mail) => mail.to.includes(address)).map((mail) => /Subject: (.*)/.exec(mail.raw)![1]);
      expect(subjects(anna)).toEqual(['Anna 1', 'Anna 2', 'Anna 3']);
      expect(subjects(boris)).toEqual(['Boris 1']);
      const [stored] = await new Mailer(db, undefined, 'x <x@x>').list({ to: refusing, limit: 1 });
      expect(stored).toMatchObject({ status: 'failed', attempts: 1 });

      // Sent again (the notice retried): only the failed mail goes out once more.
      await mailer.sendAll(mails);
      expect(smtp.received).toHaveLength(4);
      expect((await new Mailer(db, undefined, 'x <x@x>').list({ to: refusing, limit: 1 }))[0]).toMatchObject({
        status: 'failed',
        attempts: 2,
      });
    } finally {
      mailer.close();
      await smtp.close();
    }
  });
});
