// The cabinet's JSON deal operations for buyer and seller, over real HTTP against PostgreSQL, Temporal and our worker:
// each user's role and allowed actions, a dispute that needs a reason, and the dispute thread with evidence files.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMultipart } from '../../src/http/multipart.ts';
import { cabinetSession, insertHeldDealSignedIn, insertMarketplace, type TestMarketplace } from '../factories.ts';
import { json, post, startTestServer, uniqueEmail, type TestServer } from '../helpers.ts';

let server: TestServer;
let marketplace: TestMarketplace;

beforeAll(async () => {
  server = await startTestServer({ worker: true });
  marketplace = await insertMarketplace(server.services, { name: 'Cabinet deals shop' });
});
afterAll(async () => {
  await server?.stop();
});

const mkt = () => ({ 'X-Svc-Key': marketplace.secret_key });
const api = (path: string) => `${server.url}/api/mkt${path}`;
const cabinet = (path: string) => `${server.url}/cabinet${path}`;

function evidence(text: string, files: { name: string; type: string; body: string }[]): FormData {
  const form = new FormData();
  form.append('text', text);
  for (const file of files) form.append('files', new Blob([file.body], { type: file.type }), file.name);
  return form;
}

const sendMessage = (dealId: string, headers: Record<string, string>, form: FormData) =>
  fetch(cabinet(`/deals/${dealId}/dispute/messages`), { method: 'POST', headers, body: form });

describe('GET /cabinet/deals and /cabinet/deals/{id}', () => {
  it('gives buyer and seller their role, and the seller no release, refund, dispute or approval', async () => {
    const { dealId, buyer, seller } = await insertHeldDealSignedIn(server.services, {
      marketplaceId: marketplace.id,
      seller: true,
      amount: 900,
    });

    const sellerList = await json(await fetch(cabinet('/deals'), { headers: seller }));
    expect(sellerList.items.find((item: { id: string }) => item.id === dealId)).toMatchObject({
      role: 'seller',
      status: 'escrow_hold',
    });
    const buyerList = await json(await fetch(cabinet('/deals'), { headers: buyer }));
    expect(buyerList.items.find((item: { id: string }) => item.id === dealId)).toMatchObject({ role: 'buyer' });

    const asSeller = await json(await fetch(cabinet(`/deals/${dealId}`), { headers: seller }));
    // The seller ships the order once the money is held; moving the money is not theirs.
    expect(asSeller).toMatchObject({ id: dealId, role: 'seller', allowed_actions: ['ship'], dispute: null });
    const asBuyer = await json(await fetch(cabinet(`/deals/${dealId}`), { headers: buyer }));
    expect(asBuyer.role).toBe('buyer');
    expect(asBuyer.allowed_actions.sort()).toEqual(['dispute', 'refund', 'release']);

    for (const action of ['release', 'refund'])
      expect((await post(cabinet(`/deals/${dealId}/escrow/${action}`), {}, seller)).status).toBe(404);
    expect((await post(cabinet(`/deals/${dealId}/escrow/dispute`), { reason: 'Mine' }, seller)).status).toBe(404);
    expect((await json(await fetch(api(`/deals/${dealId}`), { headers: mkt() }))).status).toBe('escrow_hold');
  });
});

describe('a dispute in the cabinet API', () => {
  it('needs a reason, then carries a seller message with a file to the buyer, who downloads it', async () => {
    const { dealId, buyer, seller } = await insertHeldDealSignedIn(server.services, {
      marketplaceId: marketplace.id,
      seller: true,
      amount: 900,
    });

    const early = await sendMessage(dealId, buyer, evidence('Before any dispute', []));
    expect(early.status).toBe(400);
    expect((await json(early)).code).toBe('no_open_dispute');

    for (const body of [{}, { reason: '   ' }]) {
      const reasonless = await post(cabinet(`/deals/${dealId}/escrow/dispute`), body, buyer);
      expect(reasonless.status).toBe(400);
      expect((await json(reasonless)).code).toBe('reason_required');
    }
    const tooLong = await json(
      await post(cabinet(`/deals/${dealId}/escrow/dispute`), { reason: 'x'.repeat(2001) }, buyer),
    );
    expect(tooLong).toMatchObject({ code: 'validation_failed', errors: [{ path: 'reason' }] });
    const unknown = await json(
      await post(cabinet(`/deals/${dealId}/escrow/dispute`), { reason: 'Broken', colour: 'red' }, buyer),
    );
    expect(unknown).toMatchObject({ code: 'validation_failed', errors: [{ path: 'colour' }] });
    expect((await json(await fetch(api(`/deals/${dealId}`), { headers: mkt() }))).status).toBe('escrow_hold');

    const opened = await post(cabinet(`/deals/${dealId}/escrow/dispute`), { reason: 'The lamp is broken' }, buyer);
    expect(opened.status).toBe(200);
    expect((await json(opened)).status).toBe('disputed');
    expect((await json(await fetch(cabinet(`/deals/${dealId}`), { headers: seller }))).allowed_actions).toEqual([
      'message',
      'ship',
    ]);

    const photo = { name: 'Фото упаковки.jpg', type: 'image/jpeg', body: 'jpeg bytes' };
    const sent = await sendMessage(
      dealId,
      seller,
      evidence('It left intact; the courier broke it', [
        photo,
        { name: 'waybill.txt', type: 'text/plain', body: 'w-1' },
      ]),
    );
    expect(sent.status).toBe(201);
    const message = await json(sent);
    expect(message).toMatchObject({
      author: 'seller',
      text: 'It left intact; the courier broke it',
      files: [
        { name: photo.name, size: 10 },
        { name: 'waybill.txt', size: 3 },
      ],
    });
    expect(Object.keys(message.files[0]).sort()).toEqual(['id', 'name', 'size']);

    const seen = await json(await fetch(cabinet(`/deals/${dealId}`), { headers: buyer }));
    expect(seen.dispute).toMatchObject({ status: 'open', reason: 'The lamp is broken', decision: null });
    expect(seen.dispute.messages).toEqual([message]);
    const download = await fetch(cabinet(`/documents/${message.files[0].id}/content`), { headers: buyer });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('image/jpeg');
    expect(download.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await download.text()).toBe('jpeg bytes');
    const stranger = (await cabinetSession(server.services, uniqueEmail('stranger'))).headers;
    expect((await fetch(cabinet(`/documents/${message.files[0].id}/content`), { headers: stranger })).status).toBe(404);
    expect((await sendMessage(dealId, stranger, evidence('Let me in', []))).status).toBe(404);
  });

  it('takes a photo without text, and tells the other side that files were added', async () => {
    const { dealId, buyer, sellerEmail } = await insertHeldDealSignedIn(server.services, {
      marketplaceId: marketplace.id,
      seller: true,
      amount: 900,
    });
    expect((await post(cabinet(`/deals/${dealId}/escrow/dispute`), { reason: 'Scratched' }, buyer)).status).toBe(200);
    const photoOnly = new FormData();
    photoOnly.append('files', new Blob(['jpeg bytes'], { type: 'image/jpeg' }), 'scratch.jpg');
    const sent = await sendMessage(dealId, buyer, photoOnly);
    expect(sent.status).toBe(201);
    const message = await json(sent);
    expect(message).toMatchObject({ text: '', files: [{ name: 'scratch.jpg' }] });
    await expect
      .poll(
        async () =>
          (
            await server.services.db.query<{ text_body: string }>(
              `SELECT text_body FROM mail_outbox WHERE recipient = $1 AND text_body LIKE '%added files to the dispute%'
                  OR recipient = $1 AND text_body LIKE '%приложил файлы в споре%'`,
              [sellerEmail],
            )
          ).rowCount,
        { timeout: 20_000 },
      )
      .toBe(1);
  });

  it('refuses a blank message, too many files, an unknown field and a body that is not multipart', async () => {
    const { dealId, buyer } = await insertHeldDealSignedIn(server.services, {
      marketplaceId: marketplace.id,
      seller: true,
      amount: 900,
    });
    expect((await post(cabinet(`/deals/${dealId}/escrow/dispute`), { reason: 'Late' }, buyer)).status).toBe(200);

    const blank = await json(await sendMessage(dealId, buyer, evidence(' ', [])));
    expect(blank).toMatchObject({
      code: 'validation_failed',
      errors: [{ path: 'text', message: 'must not be blank when no file is attached' }],
    });
    const six = Array.from({ length: 6 }, (_, i) => ({ name: `f${i}.txt`, type: 'text/plain', body: 'x' }));
    expect(await json(await sendMessage(dealId, buyer, evidence('Many', six)))).toMatchObject({
      code: 'validation_failed',
      errors: [{ path: 'files' }],
    });
    const extra = evidence('Hello', []);
    extra.append('subject', 'Hi');
    expect(await json(await sendMessage(dealId, buyer, extra))).toMatchObject({
      code: 'validation_failed',
      errors: [{ path: 'subject' }],
    });
    const asJson = await post(cabinet(`/deals/${dealId}/dispute/messages`), { text: 'Hello' }, buyer);
    expect(asJson.status).toBe(415);
    expect((await json(await fetch(cabinet(`/deals/${dealId}`), { headers: buyer }))).dispute.messages).toEqual([]);
  });
});

describe('the OpenAPI document', () => {
  it('describes the dispute reason as required and the message as a multipart form', async () => {
    const document = await json(await fetch(`${server.url}/api/openapi.json`));
    const dispute = document.paths['/cabinet/deals/{id}/escrow/dispute'].post.requestBody;
    expect(dispute.required).toBe(true);
    expect(dispute.content['application/json'].schema).toMatchObject({
      required: ['reason'],
      additionalProperties: false,
      properties: { reason: { maxLength: 2000 } },
    });
    const message =
      document.paths['/cabinet/deals/{id}/dispute/messages'].post.requestBody.content['multipart/form-data'].schema;
    // A message may be files alone, so its text is optional.
    expect(message.required ?? []).not.toContain('text');
    expect(message).toMatchObject({
      additionalProperties: false,
      properties: {
        text: { maxLength: 5000 },
        files: { type: 'array', maxItems: 5, items: { type: 'string', format: 'binary' } },
      },
    });
    expect(
      document.paths['/cabinet/deals/{id}'].get.responses['200'].content['application/json'].schema.properties
        .allowed_actions.type,
    ).toBe('array');
  });
});

describe('the multipart reader', () => {
  it('keeps a file that contains its boundary text, reads UTF-8 names, and skips an empty file input', () => {
    const boundary = 'XyZ';
    const body = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="text"\r\n\r\nПривет\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="Счёт %22A%22.txt"\r\nContent-Type: text/plain\r\n\r\nabc --${boundary} XyZ\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename=""\r\nContent-Type: application/octet-stream\r\n\r\n\r\n` +
        `--${boundary}--\r\nepilogue`,
    );
    const form = parseMultipart(body, boundary, 10);
    expect(form.fields.get('text')).toEqual(['Привет']);
    expect(form.files.get('files')).toEqual([
      { name: 'Счёт "A".txt', contentType: 'text/plain', bytes: Buffer.from(`abc --${boundary} XyZ`) },
    ]);
    expect(() =>
      parseMultipart(
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="text"\r\n\r\nno end`),
        boundary,
        10,
      ),
    ).toThrow(/closing boundary/);
    expect(() => parseMultipart(body, boundary, 2)).toThrow(/more than 2 parts/);
  });
});
