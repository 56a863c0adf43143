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

async function startSmtpDouble(options: { reject?: boolean } = {}) {
  const received: Received[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (chunk: Buffer) => (raw += chunk.toString()));
      stream.on('end', () => {
        if (options.reject) return callback(Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }));
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
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
});
