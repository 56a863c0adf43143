// The widget API over real HTTP, against the real PostgreSQL, the Temporal dev server and our worker: creation with
// the public key and its token, the token's rules, Continue (the DOCX contract and the approval), Pay safely (JSON
// and the 303 of a navigation, sandbox and live), and CORS with the origins administrators set.
import { randomBytes } from 'node:crypto';
import JSZip from 'jszip';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startYooKassaDouble, type YooKassaDouble } from '../doubles/yookassa.ts';
import { createWidgetDealViaApi, insertMarketplace, postWidgetDeal, type TestMarketplace } from '../factories.ts';
import {
  json,
  post,
  signInFromInvitation,
  startTestServer,
  uniqueEmail,
  uniqueId,
  type TestServer,
} from '../helpers.ts';
import { issueWidgetToken } from '../../src/widget/token.ts';
import { formatAmount } from '../../src/widget/contract.ts';

let server: TestServer;
let yookassa: YooKassaDouble;
let sandbox: TestMarketplace;
let live: TestMarketplace;
const SHOP = 'https://shop.example';

beforeAll(async () => {
  yookassa = await startYooKassaDouble({ shopId: '123456', secretKey: 'test_secret' });
  server = await startTestServer({
    worker: true,
    env: { YOOKASSA_API_URL: `${yookassa.url}/v3`, YOOKASSA_SHOP_ID: '123456', YOOKASSA_SECRET_KEY: 'test_secret' },
  });
  sandbox = await insertMarketplace(server.services, { name: 'Widget shop' });
  live = await insertMarketplace(server.services, { name: 'Live widget shop', mode: 'live', allowed_origins: [SHOP] });
});
afterAll(async () => {
  await server?.stop();
  await yookassa?.close();
});

const admin = () => ({ Authorization: `Bearer ${server.adminToken}` });
const widgetUrl = (path: string) => `${server.url}/api/mkt/widget/deals${path}`;
const wt = (token: string) => ({ 'X-Svc-Widget-Token': token });

/** What this file's deals sell, with a seller. */
const ARIS = { seller: true, title: 'Bicycle Aris', amount: 1500.5, description: 'Aluminium frame, 21 gears' };

const start = (id: string, token: string, locale = 'en') => post(widgetUrl(`/${id}/start`), { locale }, wt(token));
const getDeal = async (id: string, token: string) => json(await fetch(widgetUrl(`/${id}`), { headers: wt(token) }));

describe('widget deal creation', () => {
  it('creates with the public key (201) and answers a repeat with the same deal and a fresh token (200)', async () => {
    const before = Date.now();
    const { response, body, deal } = await postWidgetDeal(server, sandbox, ARIS);
    expect(response.status).toBe(201);
    expect(deal).toMatchObject({
      id: expect.any(String),
      external_id: body.external_id,
      status: 'created',
      widget_token: expect.any(String),
    });
    const expires = Date.parse(deal.expires_at);
    expect(expires).toBeGreaterThan(before + 1790_000);
    expect(expires).toBeLessThan(before + 1810_000);
    expect(decodeJwt(deal.widget_token)).toMatchObject({ sub: deal.id, mkt: sandbox.id, aud: 'svc-widget' });

    const repeat = await post(widgetUrl(''), body);
    expect(repeat.status).toBe(200);
    const again = await json(repeat);
    expect(again.id).toBe(deal.id);
    expect(again.widget_token).not.toBe(deal.widget_token);
    for (const token of [deal.widget_token, again.widget_token]) {
      expect((await fetch(widgetUrl(`/${deal.id}`), { headers: wt(token) })).status).toBe(200);
    }
  });

  it('gives no token for an existing external_id to another buyer, or with other deal values (409 naming them)', async () => {
    const first = await createWidgetDealViaApi(server, sandbox, ARIS);
    const other = await post(widgetUrl(''), { ...first.body, buyer_email: uniqueEmail('intruder') });
    expect(other.status).toBe(409);
    expect(await json(other)).toMatchObject({ code: 'deal_conflict', fields: ['buyer_email'] });
    const changed = await post(widgetUrl(''), { ...first.body, amount: 99, title: 'Another bicycle' });
    expect(changed.status).toBe(409);
    expect(await json(changed)).toMatchObject({ code: 'deal_conflict', fields: ['title', 'amount'] });
    // The buyer's own repeat that leaves the other fields out still gets a token.
    const { public_key, external_id, buyer_email } = first.body;
    expect(
      (await post(widgetUrl(''), { public_key, external_id, buyer_email: String(buyer_email).toUpperCase() })).status,
    ).toBe(200);
  });

  it('refuses an unknown public key, the secret key in its place, and a missing one', async () => {
    const unknown = await postWidgetDeal(server, sandbox, {
      ...ARIS,
      public_key: `pk_${randomBytes(24).toString('base64url')}`,
    });
    expect(unknown.response.status).toBe(401);
    const secret = await postWidgetDeal(server, sandbox, { ...ARIS, public_key: sandbox.secret_key });
    expect(secret.response.status).toBe(401);
    expect(secret.deal.detail).toContain('never takes the secret mk_ key');
    const withHeader = await postWidgetDeal(server, sandbox, ARIS, { 'X-Svc-Key': sandbox.secret_key });
    expect(withHeader.response.status).toBe(401);
    const missing = await post(widgetUrl(''), { external_id: uniqueId(), buyer_email: uniqueEmail() });
    expect(missing.status).toBe(400);
    expect((await json(missing)).code).toBe('validation_failed');
  });

  it('is documented in the OpenAPI document with the widget token scheme', async () => {
    const document = await json(await fetch(`${server.url}/api/openapi.json`));
    expect(document.components.securitySchemes.widgetToken).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'X-Svc-Widget-Token',
    });
    expect(document.paths['/api/mkt/widget/deals/{deal_id}/start'].post.security).toEqual([{ widgetToken: [] }]);
    expect(document.paths['/admin/marketplaces/{id}'].patch).toBeDefined();
  });
});

/** The buyer's mails about this deal (an invitation or a new-deal mail), once its workflow has provisioned the buyer. */
async function dealMails(dealId: string, email: string): Promise<{ subject: string; text: string }[]> {
  await expect
    .poll(
      async () =>
        (await server.services.db.query('SELECT buyer_id FROM deals WHERE id = $1', [dealId])).rows[0]?.buyer_id,
      { timeout: 20_000 },
    )
    .toBeTruthy();
  const mail = await json(
    await fetch(`${server.url}/admin/mail?to=${encodeURIComponent(email)}`, { headers: admin() }),
  );
  return mail.items.filter((item: { text: string }) => item.text.includes(`/cabinet/view/deals/${dealId}`));
}

describe('the invitation line', () => {
  it('is true whenever the creation mails the buyer about the deal, known or not; false for a repeat', async () => {
    const first = await postWidgetDeal(server, sandbox, ARIS);
    expect(first.response.status).toBe(201);
    expect(first.deal.invitation_sent).toBe(true);
    await expect
      .poll(
        async () =>
          (await dealMails(first.deal.id, first.body.buyer_email)).map((mail) =>
            /\/cabinet\/invite\?token=/.test(mail.text),
          ),
        { timeout: 20_000 },
      )
      .toEqual([true]);
    const repeat = await post(widgetUrl(''), first.body);
    expect(repeat.status).toBe(200);
    expect((await json(repeat)).invitation_sent).toBe(false);

    // The same buyer, invited already and without a password yet, opens another deal: the invitation tells of it too.
    const second = await postWidgetDeal(server, sandbox, { ...ARIS, buyer_email: first.body.buyer_email });
    expect(second.response.status).toBe(201);
    expect(second.deal.invitation_sent).toBe(true);
    await expect
      .poll(async () => (await dealMails(second.deal.id, first.body.buyer_email)).length, { timeout: 20_000 })
      .toBe(1);

    // A buyer who has set a password gets the new-deal mail: the answer is the same, so it tells nobody which they are.
    await signInFromInvitation(server, first.body.buyer_email);
    const third = await postWidgetDeal(server, sandbox, { ...ARIS, buyer_email: first.body.buyer_email });
    expect(third.response.status).toBe(201);
    expect(third.deal.invitation_sent).toBe(true);
    await expect
      .poll(
        async () =>
          (await dealMails(third.deal.id, first.body.buyer_email)).map((mail) =>
            /\/cabinet\/invite\?token=/.test(mail.text),
          ),
        { timeout: 20_000 },
      )
      .toEqual([false]);
  });
});

describe('mails an anonymous creation causes', () => {
  it('reach one address at most 3 times an hour per marketplace; a marketplace server is not limited', async () => {
    const shop = await insertMarketplace(server.services, { name: 'Flooded shop' });
    const stranger = uniqueEmail('stranger');
    const made: { id: string; external_id: string; widget_token: string; invitation_sent: boolean }[] = [];
    for (let i = 0; i < 4; i++) {
      const { response, deal } = await postWidgetDeal(server, shop, {
        ...ARIS,
        buyer_email: stranger,
        seller_email: '',
        title: `Click here ${i}`,
      });
      expect(response.status).toBe(201);
      made.push(deal);
    }
    expect(made.map((deal) => deal.invitation_sent)).toEqual([true, true, true, false]);
    const toStranger = async () =>
      (await json(await fetch(`${server.url}/admin/mail?to=${encodeURIComponent(stranger)}`, { headers: admin() })))
        .items as { text: string }[];
    for (const deal of made) {
      await expect
        .poll(
          async () =>
            (await server.services.db.query('SELECT buyer_id FROM deals WHERE id = $1', [deal.id])).rows[0]?.buyer_id,
          { timeout: 20_000 },
        )
        .toBeTruthy();
    }
    await expect.poll(async () => (await toStranger()).length, { timeout: 20_000 }).toBe(3);
    expect((await toStranger()).some((mail) => mail.text.includes(made[3].id))).toBe(false);

    // The approval request a widget token can cause takes a slot too: none is left this hour.
    expect((await start(made[0].id, made[0].widget_token)).status).toBe(200);
    await expect
      .poll(
        async () =>
          (
            await server.services.db.query(
              `SELECT allowed FROM widget_deal_mail WHERE external_id = $1 AND kind = 'approval'`,
              [made[0].external_id],
            )
          ).rows,
        { timeout: 20_000 },
      )
      .toEqual([{ allowed: false }]);
    expect(await toStranger()).toHaveLength(3);

    // The marketplace's own server names whom it likes: its deals are its own doing, and their mails go.
    const byServer = await post(
      `${server.url}/api/mkt/deals`,
      { external_id: uniqueId('server'), buyer_email: stranger, title: 'Ordered by phone' },
      { 'X-Svc-Key': shop.secret_key },
    );
    expect(byServer.status).toBe(201);
    const serverDeal = await json(byServer);
    await expect
      .poll(async () => (await toStranger()).filter((mail) => mail.text.includes(serverDeal.id)).length, {
        timeout: 20_000,
      })
      .toBe(1);
    // And another marketplace's widget counts apart.
    expect(
      (await postWidgetDeal(server, sandbox, { ...ARIS, buyer_email: stranger, seller_email: '' })).deal
        .invitation_sent,
    ).toBe(true);
  });
});

describe('the widget lookup (a page load)', () => {
  const lookup = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    post(widgetUrl('/lookup'), body, headers);

  it('answers 204 for an order without a deal and makes none; the creation after it is the first (201)', async () => {
    const body = {
      public_key: sandbox.public_key,
      external_id: uniqueId('order'),
      buyer_email: uniqueEmail('buyer'),
      title: 'Bicycle Aris',
      amount: 1500.5,
    };
    const none = await lookup(body);
    expect(none.status).toBe(204);
    expect(none.headers.get('cache-control')).toBe('no-store');
    expect(await none.text()).toBe('');
    expect(
      (await server.services.db.query('SELECT 1 FROM deals WHERE external_id = $1', [body.external_id])).rowCount,
    ).toBe(0);
    expect((await post(widgetUrl(''), body)).status).toBe(201);
  });

  it('finds the deal of the order in its real state with a fresh token, and never says an invitation went', async () => {
    const deal = await createWidgetDealViaApi(server, sandbox, ARIS);
    const { public_key, external_id, buyer_email, seller_email, title, amount, description } = deal.body;
    const found = await lookup({ public_key, external_id, buyer_email, seller_email, title, amount, description });
    expect(found.status).toBe(200);
    const first = await json(found);
    expect(first).toMatchObject({
      id: deal.id,
      external_id,
      status: 'created',
      invitation_sent: false,
      widget_token: expect.any(String),
    });
    expect(first.widget_token).not.toBe(deal.widget_token);
    expect(decodeJwt(first.widget_token)).toMatchObject({ sub: deal.id, mkt: sandbox.id });

    // The state moves on; a later page load sees where it stands, with only the buyer's own e-mail (any case).
    expect((await start(deal.id, first.widget_token)).status).toBe(200);
    const again = await json(await lookup({ public_key, external_id, buyer_email: String(buyer_email).toUpperCase() }));
    expect(again).toMatchObject({ id: deal.id, status: 'approval', invitation_sent: false });
    expect((await getDeal(deal.id, again.widget_token)).status).toBe('approval');
  });

  it('gives no token to another buyer or for other deal values, answering as for an unknown order (204), nor for a wrong key', async () => {
    const deal = await createWidgetDealViaApi(server, sandbox, ARIS);
    const { public_key, external_id } = deal.body;
    // Which field differs is not said: a guesser would learn that the others (the buyer's e-mail) are right.
    for (const body of [
      { public_key, external_id, buyer_email: uniqueEmail('intruder') },
      { public_key, external_id, buyer_email: deal.buyer_email, amount: 1 },
      { public_key, external_id, buyer_email: uniqueEmail('intruder'), amount: 1 },
    ]) {
      const answer = await lookup(body);
      expect(answer.status).toBe(204);
      expect(await answer.text()).toBe('');
    }
    // Another marketplace's key does not see this marketplace's order.
    const elsewhere = await lookup(
      { public_key: live.public_key, external_id, buyer_email: deal.buyer_email },
      { Origin: SHOP },
    );
    expect(elsewhere.status).toBe(204);
    expect((await lookup({ public_key: sandbox.secret_key, external_id, buyer_email: deal.buyer_email })).status).toBe(
      401,
    );
    expect(
      (
        await lookup({
          public_key: `pk_${randomBytes(24).toString('base64url')}`,
          external_id,
          buyer_email: deal.buyer_email,
        })
      ).status,
    ).toBe(401);
    const unknownField = await lookup({
      public_key,
      external_id,
      buyer_email: deal.buyer_email,
      widget_token: deal.widget_token,
    });
    expect(unknownField.status).toBe(400);
  });

  it("keeps a live marketplace's origins", async () => {
    const deal = await createWidgetDealViaApi(server, live, ARIS);
    const body = { public_key: live.public_key, external_id: deal.body.external_id, buyer_email: deal.buyer_email };
    const ok = await lookup(body, { Origin: SHOP });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe(SHOP);
    const evil = await lookup(body, { Origin: 'https://evil.example' });
    expect(evil.status).toBe(403);
    expect(evil.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('is documented with its 204 and the invitation_sent field', async () => {
    const document = await json(await fetch(`${server.url}/api/openapi.json`));
    const operation = document.paths['/api/mkt/widget/deals/lookup'].post;
    expect(operation.operationId).toBe('widgetLookupDeal');
    expect(Object.keys(operation.responses).sort()).toEqual(expect.arrayContaining(['200', '204']));
    expect(operation.responses['409']).toBeUndefined();
    expect(operation.requestBody.content['application/json'].schema.additionalProperties).toBe(false);
    const creation = document.paths['/api/mkt/widget/deals'].post.responses['201'].content['application/json'].schema;
    expect(creation.required).toContain('invitation_sent');
  });
});

describe('the widget token', () => {
  it('reads the deal as the buyer sees it, with the cabinet link; from the header or the wt query', async () => {
    const deal = await createWidgetDealViaApi(server, sandbox, ARIS);
    const view = await getDeal(deal.id, deal.widget_token);
    expect(view).toMatchObject({
      id: deal.id,
      status: 'created',
      title: 'Bicycle Aris',
      amount: 1500.5,
      currency: 'RUB',
      documents: [],
      approvals: [],
      payments: [],
      // A sandbox marketplace's deal says so, and has no contract to read before Continue.
      mode: 'sandbox',
      contract_url: null,
    });
    expect(view.cabinet_url).toBe(`${server.url}/cabinet/view/deals/${deal.id}`);
    const byQuery = await fetch(widgetUrl(`/${deal.id}?wt=${encodeURIComponent(deal.widget_token)}`));
    expect(byQuery.status).toBe(200);
  });

  it('is 401 when missing, tampered, signed with another key, of another algorithm or expired', async () => {
    const deal = await createWidgetDealViaApi(server, sandbox, ARIS);
    const status = async (headers: Record<string, string>) => {
      const response = await fetch(widgetUrl(`/${deal.id}`), { headers });
      return { status: response.status, code: (await json(response)).code };
    };
    expect(await status({})).toEqual({ status: 401, code: 'unauthorized' });
    const [header, payload, signature] = deal.widget_token.split('.');
    const flipped = `${signature.slice(0, -2)}${signature.at(-2) === 'A' ? 'B' : 'A'}${signature.at(-1)}`;
    expect(await status(wt(`${header}.${payload}.${flipped}`))).toMatchObject({ status: 401 });
    const forged = Buffer.from(
      JSON.stringify({ ...decodeJwt(deal.widget_token), sub: deal.id, mkt: live.id }),
    ).toString('base64url');
    expect(await status(wt(`${header}.${forged}.${signature}`))).toMatchObject({ status: 401 });
    const otherKey = await issueWidgetToken(randomBytes(32), { dealId: deal.id, marketplaceId: sandbox.id }, 600);
    expect(await status(wt(otherKey.token))).toMatchObject({ status: 401 });
    const none = `${Buffer.from('{"alg":"none","typ":"svc-widget+jwt"}').toString('base64url')}.${payload}.`;
    expect(await status(wt(none))).toMatchObject({ status: 401 });
    const expired = await issueWidgetToken(
      server.services.masterKey,
      { dealId: deal.id, marketplaceId: sandbox.id },
      60,
      Math.floor(Date.now() / 1000) - 3600,
    );
    expect(await status(wt(expired.token))).toEqual({ status: 401, code: 'widget_token_expired' });
  });

  it('is 403 on another deal, and the secret key is never a widget credential', async () => {
    const [mine, theirs] = await Promise.all([
      createWidgetDealViaApi(server, sandbox, ARIS),
      createWidgetDealViaApi(server, sandbox, ARIS),
    ]);
    const other = await fetch(widgetUrl(`/${theirs.id}`), { headers: wt(mine.widget_token) });
    expect(other.status).toBe(403);
    expect((await start(theirs.id, mine.widget_token)).status).toBe(403);
    const secret = await fetch(widgetUrl(`/${mine.id}`), { headers: { 'X-Svc-Key': sandbox.secret_key } });
    expect(secret.status).toBe(401);
    const both = await fetch(widgetUrl(`/${mine.id}`), {
      headers: { ...wt(mine.widget_token), 'X-Svc-Key': sandbox.secret_key },
    });
    expect(both.status).toBe(401);
    expect((await fetch(widgetUrl(`/${mine.id}`), { headers: wt(sandbox.secret_key) })).status).toBe(401);
  });

  it('is never accepted on marketplace operations', async () => {
    const deal = await createWidgetDealViaApi(server, sandbox, ARIS);
    for (const headers of [{ 'X-Svc-Key': deal.widget_token }, wt(deal.widget_token)]) {
      expect((await fetch(`${server.url}/api/mkt/deals/${deal.id}`, { headers })).status).toBe(401);
      expect((await post(`${server.url}/api/mkt/deals/${deal.id}/approval`, {}, headers)).status).toBe(401);
      expect((await fetch(`${server.url}/api/mkt/ping`, { headers })).status).toBe(401);
    }
  });
});

describe('Continue', () => {
  it('generates the DOCX contract into the buyer cloud and starts the approval; a repeat changes nothing', async () => {
    const deal = await createWidgetDealViaApi(server, sandbox, ARIS);
    const response = await start(deal.id, deal.widget_token);
    expect(response.status).toBe(200);
    const view = await json(response);
    expect(view.status).toBe('approval');
    expect(view.documents).toEqual([{ id: expect.any(String), kind: 'contract', name: 'Contract.docx' }]);
    expect(view.approvals).toEqual([{ id: expect.any(String), status: 'pending', decided_at: null }]);

    const repeat = await json(await start(deal.id, deal.widget_token));
    expect(repeat.documents).toEqual(view.documents);
    expect(repeat.approvals).toEqual(view.approvals);

    // The contract is a valid DOCX with the deal's title and amount, readable by the buyer in the cabinet.
    const buyer = await signInFromInvitation(server, deal.buyer_email);
    const content = await fetch(`${server.url}/cabinet/documents/${view.documents[0].id}/content`, { headers: buyer });
    expect(content.status).toBe(200);
    expect(content.headers.get('content-type')).toContain('wordprocessingml.document');
    const zip = await JSZip.loadAsync(Buffer.from(await content.arrayBuffer()));
    expect(Object.keys(zip.files)).toEqual(expect.arrayContaining(['[Content_Types].xml', 'word/document.xml']));
    const xml = await zip.file('word/document.xml')!.async('string');
    expect(xml).toContain('Bicycle Aris');
    expect(xml).toContain(formatAmount(1500.5, 'en')); // 1,500.50
    expect(xml).toContain('RUB');
    expect(xml).toContain('Aluminium frame, 21 gears');
    expect(xml).toContain(deal.buyer_email);
    expect(xml).toContain(deal.body.seller_email);
  });

  it('writes the contract in Russian for a Russian widget', async () => {
    const deal = await createWidgetDealViaApi(server, sandbox, { ...ARIS, title: 'Велосипед «Арис»', amount: 98765.4 });
    const view = await json(await start(deal.id, deal.widget_token, 'ru'));
    expect(view.documents[0].name).toBe('Договор.docx');
    const stored = await server.services.db.query('SELECT storage_key FROM deal_documents WHERE id = $1', [
      view.documents[0].id,
    ]);
    const zip = await JSZip.loadAsync(await server.services.documents.get(stored.rows[0].storage_key));
    const xml = await zip.file('word/document.xml')!.async('string');
    expect(xml).toContain('Договор по сделке');
    expect(xml).toContain('Велосипед «Арис»');
    expect(xml).toContain(formatAmount(98765.4, 'ru')); // 98 765,40
  });

  it('keeps the documents a deal has and an approval already pending; a double click makes one contract', async () => {
    const mk = { 'X-Svc-Key': sandbox.secret_key };
    const deal = await createWidgetDealViaApi(server, sandbox, ARIS);
    const upload = await fetch(`${server.url}/api/mkt/deals/${deal.id}/documents?kind=offer&name=Offer.pdf`, {
      method: 'POST',
      headers: { ...mk, 'Content-Type': 'application/pdf' },
      body: Buffer.from('%PDF-1.4 offer'),
    });
    expect(upload.status).toBe(201);
    const view = await json(await start(deal.id, deal.widget_token));
    expect(view.documents.map((d: { kind: string }) => d.kind)).toEqual(['offer']);
    expect(view.status).toBe('approval');

    const pending = await createWidgetDealViaApi(server, sandbox, ARIS);
    await fetch(`${server.url}/api/mkt/deals/${pending.id}/documents?kind=contract`, {
      method: 'POST',
      headers: mk,
      body: Buffer.from('terms'),
    });
    const approval = await json(await post(`${server.url}/api/mkt/deals/${pending.id}/approval`, {}, mk));
    const after = await json(await start(pending.id, pending.widget_token));
    expect(after.approvals.map((a: { id: string }) => a.id)).toEqual([approval.id]);

    const twice = await createWidgetDealViaApi(server, sandbox, ARIS);
    const both = await Promise.all([start(twice.id, twice.widget_token), start(twice.id, twice.widget_token)]);
    expect(both.map((r) => r.status)).toEqual([200, 200]);
    const final = await getDeal(twice.id, twice.widget_token);
    expect(final.documents).toHaveLength(1);
    expect(final.approvals).toHaveLength(1);
  });
});

describe('Pay safely', () => {
  async function approved(marketplace = sandbox, headers: Record<string, string> = {}) {
    const deal = await createWidgetDealViaApi(server, marketplace, ARIS, headers);
    const view = await json(
      await post(widgetUrl(`/${deal.id}/start`), { locale: 'en' }, { ...wt(deal.widget_token), ...headers }),
    );
    const buyer = await signInFromInvitation(server, deal.buyer_email);
    expect((await post(`${server.url}/cabinet/approvals/${view.approvals[0].id}/approve`, {}, buyer)).status).toBe(200);
    return deal;
  }
  const escrow = (id: string, token: string, headers: Record<string, string> = {}) =>
    fetch(widgetUrl(`/${id}/escrow?wt=${encodeURIComponent(token)}&locale=en`), {
      method: 'POST',
      redirect: 'manual',
      headers,
    });

  it('refuses before approval: 400 for JSON, a 303 to the result page that explains for a navigation', async () => {
    const deal = await createWidgetDealViaApi(server, sandbox, ARIS);
    const response = await post(widgetUrl(`/${deal.id}/escrow`), {}, wt(deal.widget_token));
    expect(response.status).toBe(400);
    expect((await json(response)).code).toBe('deal_not_approved');
    const navigation = await escrow(deal.id, deal.widget_token, {
      Accept: 'text/html,application/xhtml+xml,*/*;q=0.8',
    });
    expect(navigation.status).toBe(303);
    const location = new URL(navigation.headers.get('location')!);
    expect(location.pathname).toBe('/widget/escrow-result');
    expect(location.searchParams.get('error')).toBe('deal_not_approved');
    expect(await (await fetch(location)).text()).toContain('not approved yet');
  });

  it('holds at once in the sandbox (JSON 201), and a navigation lands on the result page', async () => {
    const deal = await approved();
    const response = await post(widgetUrl(`/${deal.id}/escrow`), {}, wt(deal.widget_token));
    expect(response.status).toBe(201);
    expect(await json(response)).toMatchObject({ ok: true, provider: 'sandbox', status: 'hold', amount: 1500.5 });
    expect((await getDeal(deal.id, deal.widget_token)).status).toBe('escrow_hold');

    const other = await approved();
    const navigation = await escrow(other.id, other.widget_token, { Accept: 'text/html' });
    expect(navigation.status).toBe(303);
    const location = new URL(navigation.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(`${server.url}/widget/escrow-result`);
    expect(location.searchParams.get('status')).toBe('hold');
    const page = await fetch(location);
    expect(page.headers.get('content-type')).toContain('text/html');
    const text = await page.text();
    expect(text).toContain('The money is held in escrow');
    expect(text).toContain('Test mode: this shop is not live yet, so no real money was taken.');
    const held = await getDeal(other.id, other.widget_token);
    expect(held.status).toBe('escrow_hold');
    // After Continue the deal has its contract, which the buyer reads in the cabinet.
    expect(held.contract_url).toBe(`${server.url}/cabinet/view/deals/${other.id}#documents`);
  });

  it("sends a live buyer to the acquirer's payment page with a 303", async () => {
    const deal = await approved(live, { Origin: SHOP });
    const navigation = await escrow(deal.id, deal.widget_token, { Accept: 'text/html', Origin: SHOP });
    expect(navigation.status).toBe(303);
    expect(navigation.headers.get('location')).toContain(yookassa.url);
    const view = await getDeal(deal.id, deal.widget_token);
    expect(view.mode).toBe('live');
    expect(view.payments).toEqual([
      expect.objectContaining({ status: 'pending', payment_url: navigation.headers.get('location') }),
    ]);
  });
});

describe('CORS', () => {
  it('answers preflights for the widget endpoints', async () => {
    for (const path of ['', '/lookup', `/${crypto.randomUUID()}/start`, `/${crypto.randomUUID()}`]) {
      const response = await fetch(widgetUrl(path), {
        method: 'OPTIONS',
        headers: {
          Origin: SHOP,
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'content-type,x-svc-widget-token',
        },
      });
      expect(response.status).toBe(204);
      expect(response.headers.get('access-control-allow-origin')).toBe(SHOP);
      expect(response.headers.get('access-control-allow-methods')).toContain('POST');
      expect(response.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('x-svc-widget-token');
      expect(response.headers.get('vary')).toContain('Origin');
    }
  });

  it("allows a live marketplace's registered origins only; a sandbox marketplace any origin", async () => {
    const ok = await postWidgetDeal(server, live, ARIS, { Origin: SHOP });
    expect(ok.response.status).toBe(201);
    expect(ok.response.headers.get('access-control-allow-origin')).toBe(SHOP);
    const read = await fetch(widgetUrl(`/${ok.deal.id}`), { headers: { ...wt(ok.deal.widget_token), Origin: SHOP } });
    expect(read.headers.get('access-control-allow-origin')).toBe(SHOP);

    const evil = await postWidgetDeal(server, live, ARIS, { Origin: 'https://evil.example' });
    expect(evil.response.status).toBe(403);
    expect(evil.deal.code).toBe('origin_not_allowed');
    expect(evil.response.headers.get('access-control-allow-origin')).toBeNull();
    const evilRead = await fetch(widgetUrl(`/${ok.deal.id}`), {
      headers: { ...wt(ok.deal.widget_token), Origin: 'https://evil.example' },
    });
    expect(evilRead.status).toBe(403);
    expect(evilRead.headers.get('access-control-allow-origin')).toBeNull();

    const anywhere = await postWidgetDeal(server, sandbox, ARIS, { Origin: 'http://localhost:8080' });
    expect(anywhere.response.status).toBe(201);
    expect(anywhere.response.headers.get('access-control-allow-origin')).toBe('http://localhost:8080');
  });

  it('lets administrators set the origins, effective at once', async () => {
    const shop = await insertMarketplace(server.services, { name: 'Origins shop', mode: 'live' });
    const patch = (body: unknown, headers: Record<string, string> = admin(), id = shop.id) =>
      fetch(`${server.url}/admin/marketplaces/${id}`, {
        method: 'PATCH',
        headers: { ...headers, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await postWidgetDeal(server, shop, ARIS, { Origin: 'https://new.example' })).response.status).toBe(403);

    const updated = await patch({ allowed_origins: ['https://new.example', 'http://127.0.0.1:8080'] });
    expect(updated.status).toBe(200);
    expect(await json(updated)).toMatchObject({
      id: shop.id,
      allowed_origins: ['https://new.example', 'http://127.0.0.1:8080'],
    });
    expect((await postWidgetDeal(server, shop, ARIS, { Origin: 'https://new.example' })).response.status).toBe(201);

    expect((await patch({ allowed_origins: ['https://new.example/path'] })).status).toBe(400);
    expect((await patch({ allowed_origins: ['*'] })).status).toBe(400);
    expect((await patch({ allowed_origins: [] }, {})).status).toBe(401);
    expect((await patch({ allowed_origins: [] }, admin(), crypto.randomUUID())).status).toBe(404);
  });
});
