// No input wedges a deal. For every input that reaches a deal, hostile values (NUL, other C0 controls, a lone
// surrogate, huge strings) are refused, and a clean request right after succeeds within a second: a deal whose
// workflow was left waiting on a write PostgreSQL refuses answers 503 only after 30 s. Over HTTP the boundary refuses
// them (400 validation_failed); sent straight to the workflow, past the boundary, the records refuse them
// (invalid_record, not retried) and the deal stays exactly as it was, in the workflow and in PostgreSQL.
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApplicationFailure, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { dealWorkflowId } from '../../src/deals/model.ts';
import { loadSnapshot } from '../../src/deals/store.ts';
import { updateDeal } from '../../src/deals/commands.ts';
import { Problem } from '../../src/http/problem.ts';
import {
  addDocumentUpdate,
  decideUpdate,
  snapshotQuery,
  startApprovalUpdate,
  type NewDocument,
} from '../../workflows/deals/deal-messages.ts';
import { createDealViaApi, insertMarketplace, type TestMarketplace } from '../factories.ts';
import {
  json,
  post,
  signInFromInvitation,
  startTestServer,
  uniqueEmail,
  uniqueId,
  type TestServer,
} from '../helpers.ts';

let server: TestServer;
let marketplace: TestMarketplace;
let buyerEmail: string;
let buyer: Record<string, string>;
let firstDealId: string;

const admin = () => ({ Authorization: `Bearer ${server.adminToken}` });
const mkt = () => ({ 'X-Svc-Key': marketplace.secret_key });
const api = (path: string) => `${server.url}/api/mkt${path}`;

/** Hostile text for JSON bodies, which can carry any UTF-16 string (a lone surrogate as a \ud800 escape). */
const HOSTILE_TEXT: Record<string, string> = {
  NUL: 'a\u0000b',
  'a bell (C0)': 'a\u0007b',
  'an escape (C0)': 'a\u001bb',
  'a lone surrogate': 'a\ud800b',
  'a huge string': 'x'.repeat(200_000),
};
/**
 * Hostile text for what travels as UTF-8 bytes: the path, the query, forms and headers. A lone surrogate has no UTF-8
 * form, so none of them can carry one; NUL in a header is refused by the HTTP client and Node's parser before any code
 * of ours runs.
 */
const HOSTILE_BYTES_TEXT: Record<string, string> = {
  NUL: 'a\u0000b',
  'a bell (C0)': 'a\u0007b',
  'an escape (C0)': 'a\u001bb',
  'a huge string': 'x'.repeat(20_000),
};
const HOSTILE_HEADER_TEXT: Record<string, string> = {
  'a bell (C0)': 'text/plain\u0007',
  'an escape (C0)': 'text/\u001bplain',
  'a huge string': `text/${'x'.repeat(20_000)}`,
};

/**
 * A POST with raw header bytes: fetch and node:http refuse to send control characters in a header, a client of our
 * own making need not. Answers the status and the body.
 */
function rawPost(path: string, headers: Record<string, string>, body: Buffer): Promise<Response> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
      const contentType = /\r\ncontent-type: ([^\r]*)/i.exec(head)?.[1] ?? 'text/plain';
      resolve(new Response(rest.join('\r\n\r\n'), { status, headers: { 'Content-Type': contentType } }));
    });
    const lines = Object.entries({
      Host: `${hostname}:${port}`,
      Connection: 'close',
      'Content-Length': String(body.length),
      ...headers,
    });
    socket.end(
      Buffer.concat([
        Buffer.from(
          `POST ${path} HTTP/1.1\r\n${lines.map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n`,
          'latin1',
        ),
        body,
      ]),
    );
  });
}

beforeAll(async () => {
  // The widget test sends more creations from one address than the default limit allows.
  server = await startTestServer({ worker: true, env: { WIDGET_CREATE_LIMIT_PER_ADDRESS: '1000' } });
  marketplace = await insertMarketplace(server.services, { name: 'Hostile shop' });
  // One buyer for every deal, signed in from the first deal's invitation (in a test: it polls the outbox).
  buyerEmail = uniqueEmail('buyer');
  firstDealId = (await createDealViaApi(server, marketplace, { buyer_email: buyerEmail, amount: 120 })).id;
});
beforeEach(async () => {
  if (buyer) return;
  buyer = await signInFromInvitation(server, buyerEmail);
  // The first deal also warms the worker up, so the timings below measure a deal's work, not a cold start.
  await toApproved(firstDealId);
});
afterAll(async () => {
  await server?.stop();
});

function upload(dealId: string, query = 'kind=act&name=Act.pdf', contentType = 'application/pdf'): Promise<Response> {
  return fetch(api(`/deals/${dealId}/documents?${query}`), {
    method: 'POST',
    headers: { ...mkt(), 'Content-Type': contentType },
    body: Buffer.from('%PDF act'),
  });
}

async function toApproval(dealId: string): Promise<{ id: string }> {
  expect((await upload(dealId)).status).toBe(201);
  const approval = await post(api(`/deals/${dealId}/approval`), {}, mkt());
  expect(approval.status).toBe(201);
  return json(approval);
}

async function toApproved(dealId: string): Promise<void> {
  const approval = await toApproval(dealId);
  expect((await post(`${server.url}/cabinet/approvals/${approval.id}/approve`, {}, buyer)).status).toBe(200);
}

async function toHeld(dealId: string): Promise<void> {
  await toApproved(dealId);
  expect((await post(api(`/deals/${dealId}/escrow`), {}, mkt())).status).toBe(201);
}

/**
 * Sends every hostile request; each is refused at once: 400 (validation_failed unless told otherwise; web pages answer
 * HTML), or for huge strings also what Node and the body limits answer before any route runs (431 for a URL or header
 * beyond 16 KiB, 413 for a body beyond its limit).
 */
async function refusesAll(
  requests: Record<string, () => Promise<Response>>,
  codes = ['validation_failed'],
): Promise<void> {
  for (const [what, send] of Object.entries(requests)) {
    const response = await send();
    const body = await response.text();
    expect(
      what.includes('huge') ? [400, 413, 431] : [400],
      `${what}: ${response.status} ${body.slice(0, 300)}`,
    ).toContain(response.status);
    if (response.status === 400 && response.headers.get('content-type')?.includes('json'))
      expect(codes, what).toContain(JSON.parse(body).code);
  }
}

/**
 * The clean request after the hostile ones succeeds. A deal that any of them had wedged would keep it waiting for the
 * 30 s update deadline and answer 503 instead.
 */
async function succeedsAtOnce(send: () => Promise<Response>, status: number): Promise<any> {
  const response = await send();
  const body = await response.text();
  expect(response.status, body.slice(0, 300)).toBe(status);
  return response.headers.get('content-type')?.includes('json') ? JSON.parse(body) : undefined;
}

/** One hostile request per value, named `<input>: <what>`. */
const each = <T>(input: string, values: Record<string, T>, request: (value: T) => () => Promise<Response>) =>
  Object.fromEntries(Object.entries(values).map(([what, value]) => [`${input}: ${what}`, request(value)]));

describe('over HTTP, every input that reaches a deal', () => {
  it('marketplace approval: comment and approver_email', async () => {
    const deal = await createDealViaApi(server, marketplace, { buyer_email: buyerEmail, amount: 120 });
    expect((await upload(deal.id)).status).toBe(201);
    await refusesAll({
      ...each(
        'comment',
        HOSTILE_TEXT,
        (value) => () => post(api(`/deals/${deal.id}/approval`), { comment: value }, mkt()),
      ),
      ...each(
        'approver_email',
        HOSTILE_TEXT,
        (value) => () => post(api(`/deals/${deal.id}/approval`), { approver_email: `${value}@example.com` }, mkt()),
      ),
    });
    expect(
      await succeedsAtOnce(() => post(api(`/deals/${deal.id}/approval`), { comment: 'Please check' }, mkt()), 201),
    ).toMatchObject({ status: 'pending' });
  });

  it('documents: kind, name and the file content type', async () => {
    const deal = await createDealViaApi(server, marketplace, { buyer_email: buyerEmail, amount: 120 });
    await refusesAll({
      ...each('kind', HOSTILE_BYTES_TEXT, (value) => () => upload(deal.id, `kind=${encodeURIComponent(value)}`)),
      ...each(
        'name',
        HOSTILE_BYTES_TEXT,
        (value) => () => upload(deal.id, `kind=act&name=${encodeURIComponent(value)}`),
      ),
      ...each(
        'Content-Type',
        HOSTILE_HEADER_TEXT,
        (value) => () =>
          rawPost(
            `/api/mkt/deals/${deal.id}/documents?kind=act`,
            { ...mkt(), 'Content-Type': value },
            Buffer.from('%PDF act'),
          ),
      ),
    });
    expect(await succeedsAtOnce(() => upload(deal.id), 201)).toMatchObject({ kind: 'act', name: 'Act.pdf' });
  });

  it('escrow: description and amount', async () => {
    const deal = await createDealViaApi(server, marketplace, { buyer_email: buyerEmail, amount: 120 });
    await toApproved(deal.id);
    const escrow = (body: string) => () => post(api(`/deals/${deal.id}/escrow`), body, mkt());
    await refusesAll(each('description', HOSTILE_TEXT, (value) => escrow(JSON.stringify({ description: value }))));
    await refusesAll(
      {
        'an infinite amount': escrow('{"amount":1e400}'),
        'a negative amount': escrow('{"amount":-1}'),
        'an amount as text': escrow('{"amount":"120"}'),
        'an amount beyond the deal': escrow('{"amount":1e300}'),
      },
      ['validation_failed', 'amount_exceeds_deal'],
    );
    expect(await succeedsAtOnce(escrow('{"description":"Lamp, paid safely"}'), 201)).toMatchObject({ status: 'hold' });
  });

  it("cabinet: the buyer's reject comment, as JSON and in the web form", async () => {
    const deal = await createDealViaApi(server, marketplace, { buyer_email: buyerEmail, amount: 120 });
    const approval = await toApproval(deal.id);
    const page = await signedInPage();
    const csrf = await page.csrf();
    await refusesAll({
      ...each(
        'JSON comment',
        HOSTILE_TEXT,
        (value) => () => post(`${server.url}/cabinet/approvals/${approval.id}/reject`, { comment: value }, buyer),
      ),
      ...each(
        'form comment',
        HOSTILE_BYTES_TEXT,
        (value) => () => page.post(`/cabinet/view/approvals/${approval.id}/reject`, { _csrf: csrf, comment: value }),
      ),
    });
    const rejected = await succeedsAtOnce(
      () => post(`${server.url}/cabinet/approvals/${approval.id}/reject`, { comment: 'Wrong size' }, buyer),
      200,
    );
    expect(rejected).toMatchObject({ status: 'rejected', comment: 'Wrong size' });

    // After a rejection a new approval may start: the web form's clean rejection goes through as well.
    const again = await json(await post(api(`/deals/${deal.id}/approval`), {}, mkt()));
    await succeedsAtOnce(
      () => page.post(`/cabinet/view/approvals/${again.id}/reject`, { _csrf: csrf, comment: 'Still wrong' }),
      303,
    );
    const state = await json(await fetch(api(`/deals/${deal.id}`), { headers: mkt() }));
    expect(state.approvals.map((item: { status: string; comment: string }) => [item.status, item.comment])).toEqual([
      ['rejected', 'Wrong size'],
      ['rejected', 'Still wrong'],
    ]);
  });

  it('cabinet release, refund and dispute, then the arbiter in administration', async () => {
    const deal = await createDealViaApi(server, marketplace, { buyer_email: buyerEmail, amount: 120 });
    await toHeld(deal.id);
    const move =
      (who: 'cabinet' | 'admin', id: string, action: string, body: unknown = {}) =>
      () =>
        post(`${server.url}/${who}/deals/${id}/escrow/${action}`, body, who === 'cabinet' ? buyer : admin());
    // Their inputs are the deal in the path and the reason; resolve also takes the outcome.
    const hostilePaths = (who: 'cabinet' | 'admin', actions: string[]) =>
      Object.fromEntries(
        actions.flatMap((action) =>
          Object.entries(HOSTILE_BYTES_TEXT).map(([what, value]) => [
            `${who} ${action}: ${what}`,
            move(who, `${deal.id}${encodeURIComponent(value)}`, action),
          ]),
        ),
      );
    await refusesAll({
      ...hostilePaths('cabinet', ['release', 'refund', 'dispute']),
      ...each('dispute reason', HOSTILE_TEXT, (value) => move('cabinet', deal.id, 'dispute', { reason: value })),
    });
    expect(
      await succeedsAtOnce(move('cabinet', deal.id, 'dispute', { reason: 'Not as described' }), 200),
    ).toMatchObject({ status: 'disputed' });

    await refusesAll({
      ...hostilePaths('admin', ['release', 'refund', 'dispute', 'resolve']),
      ...each('resolve outcome', HOSTILE_TEXT, (value) =>
        move('admin', deal.id, 'resolve', { outcome: value, reason: 'Delivered' }),
      ),
      ...each('resolve reason', HOSTILE_TEXT, (value) =>
        move('admin', deal.id, 'resolve', { outcome: 'release', reason: value }),
      ),
    });
    expect(
      await succeedsAtOnce(move('admin', deal.id, 'resolve', { outcome: 'release', reason: 'Delivered' }), 200),
    ).toMatchObject({ status: 'released' });
  });

  it('widget: creation, Continue and escrow', async () => {
    const widget = (path: string) => `${server.url}/api/mkt/widget/deals${path}`;
    const fields = {
      public_key: marketplace.public_key,
      external_id: uniqueId('cart'),
      buyer_email: buyerEmail,
      title: 'Chair',
      amount: 80,
    };
    await refusesAll(
      Object.fromEntries(
        ['public_key', 'external_id', 'buyer_email', 'title', 'buyer_name', 'description', 'currency'].flatMap(
          (field) =>
            Object.entries(HOSTILE_TEXT).map(([what, value]) => [
              `${field}: ${what}`,
              () => post(widget(''), { ...fields, [field]: value }),
            ]),
        ),
      ),
    );
    const created = await succeedsAtOnce(() => post(widget(''), fields), 201);
    const token = { 'X-Svc-Widget-Token': created.widget_token };

    await refusesAll(
      each(
        'start locale',
        HOSTILE_TEXT,
        (value) => () => post(widget(`/${created.id}/start`), { locale: value }, token),
      ),
    );
    expect(
      await succeedsAtOnce(() => post(widget(`/${created.id}/start`), { locale: 'en' }, token), 200),
    ).toMatchObject({ status: 'approval' });

    const { items } = await json(await fetch(`${server.url}/cabinet/approvals`, { headers: buyer }));
    const pending = items.find((item: { deal: { id: string } }) => item.deal.id === created.id);
    expect((await post(`${server.url}/cabinet/approvals/${pending.id}/approve`, {}, buyer)).status).toBe(200);
    await refusesAll({
      ...each(
        'escrow locale',
        HOSTILE_BYTES_TEXT,
        (value) => () => post(widget(`/${created.id}/escrow?locale=${encodeURIComponent(value)}`), {}, token),
      ),
      ...each(
        'escrow wt',
        HOSTILE_BYTES_TEXT,
        (value) => () => post(widget(`/${created.id}/escrow?wt=${encodeURIComponent(value)}`), {}, token),
      ),
    });
    expect(await succeedsAtOnce(() => post(widget(`/${created.id}/escrow?locale=en`), {}, token), 201)).toMatchObject({
      status: 'hold',
    });
  });
});

describe('straight to the workflow, past the boundary', () => {
  /** A deal with a document, its workflow handle, and the organization that holds the deal's files. */
  async function dealWithDocument() {
    const deal = await createDealViaApi(server, marketplace, { buyer_email: buyerEmail, amount: 120 });
    expect((await upload(deal.id)).status).toBe(201);
    const handle = server.services.temporal.workflow.getHandle(dealWorkflowId(marketplace.id, deal.external_id));
    const { rows } = await server.services.db.query('SELECT organization_id FROM deal_documents WHERE deal_id = $1', [
      deal.id,
    ]);
    return { deal, handle, organizationId: rows[0].organization_id as string };
  }

  function newDocument(organizationId: string, name: string): NewDocument {
    const id = randomUUID();
    return {
      id,
      kind: 'act',
      name,
      content_type: 'application/pdf',
      size: 8,
      sha256: 'a'.repeat(64),
      created_at: new Date().toISOString(),
      organization_id: organizationId,
      storage_key: `org/${organizationId}/${id}`,
    };
  }

  /** Runs the hostile update: it fails with the records' non-retryable refusal (never retried), and changes nothing. */
  async function refusedByTheRecords(dealId: string, handle: WorkflowHandle, update: () => Promise<unknown>) {
    const inWorkflow = await handle.query(snapshotQuery);
    const inPostgres = await loadSnapshot(server.services.db, dealId);
    const error = await update().then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
    const causes: unknown[] = [];
    for (let cause = (error as Error).cause; cause; cause = (cause as Error).cause) causes.push(cause);
    const refusal = causes.find(
      (cause) => cause instanceof ApplicationFailure && cause.type === 'invalid_record',
    ) as ApplicationFailure;
    expect(refusal).toMatchObject({ nonRetryable: true });
    expect(refusal.message).not.toMatch(/byte sequence|UTF8|constraint|SQL|INSERT/i);
    expect(await handle.query(snapshotQuery)).toEqual(inWorkflow);
    expect(await loadSnapshot(server.services.db, dealId)).toEqual(inPostgres);
  }

  /** The clean update right after succeeds: a deal the hostile one had wedged would time out instead. */
  async function goesThroughAtOnce<T>(update: () => Promise<T>): Promise<T> {
    return update();
  }

  it('a document name with NUL or a lone surrogate', async () => {
    const { deal, handle, organizationId } = await dealWithDocument();
    for (const name of ['a\u0000b', 'a\ud800b']) {
      await refusedByTheRecords(deal.id, handle, () =>
        handle.executeUpdate(addDocumentUpdate, { args: [newDocument(organizationId, name)] }),
      );
      const clean = newDocument(organizationId, 'Act 2.pdf');
      expect(await goesThroughAtOnce(() => handle.executeUpdate(addDocumentUpdate, { args: [clean] }))).toMatchObject({
        id: clean.id,
        name: 'Act 2.pdf',
      });
      expect((await handle.query(snapshotQuery)).documents.map((document) => document.id)).toContain(clean.id);
      expect((await loadSnapshot(server.services.db, deal.id))!.documents.map((document) => document.id)).toContain(
        clean.id,
      );
    }
  });

  it("the buyer's decision with a NUL comment", async () => {
    const { deal, handle } = await dealWithDocument();
    const approval = await json(await post(api(`/deals/${deal.id}/approval`), {}, mkt()));
    const decide = (comment: string) => () =>
      handle.executeUpdate(decideUpdate, {
        args: [{ approval_id: approval.id, decision: 'reject', comment, actor: buyerEmail }],
      });
    await refusedByTheRecords(deal.id, handle, decide('a\u0000b'));
    expect(await goesThroughAtOnce(decide('Wrong size'))).toMatchObject({ status: 'rejected', comment: 'Wrong size' });
    expect((await loadSnapshot(server.services.db, deal.id))!.approvals).toEqual([
      expect.objectContaining({ id: approval.id, status: 'rejected', comment: 'Wrong size' }),
    ]);
  });

  it('an approval whose comment or approver the records refuse', async () => {
    const { deal, handle } = await dealWithDocument();
    const start = (approver: string, comment: string) => () =>
      handle.executeUpdate(startApprovalUpdate, { args: [{ approver, comment }] });
    await refusedByTheRecords(deal.id, handle, start(buyerEmail, 'a\u0000b'));
    await refusedByTheRecords(deal.id, handle, start(`a\u0000b@example.com`, ''));
    await refusedByTheRecords(deal.id, handle, start(`${'x'.repeat(5000)}@example.com`, ''));
    expect(await goesThroughAtOnce(start(buyerEmail, 'Please check'))).toMatchObject({
      created: true,
      approval: { status: 'pending', comment: 'Please check' },
    });
  });

  it('through the API: 400 invalid_record, in words that do not leak PostgreSQL', async () => {
    const { deal, organizationId } = await dealWithDocument();
    const snapshot = (await loadSnapshot(server.services.db, deal.id))!;
    const refused = await updateDeal(
      server.services,
      snapshot,
      addDocumentUpdate,
      newDocument(organizationId, 'a\u0000b'),
    ).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(Problem);
    expect(refused).toMatchObject({ status: 400, code: 'invalid_record' });
    expect((refused as Problem).message).not.toMatch(/byte sequence|UTF8|SQL/i);
    const problemPage = await fetch(`${server.url}/problems/invalid_record`, {
      headers: { Accept: 'application/json' },
    });
    expect(problemPage.status).toBe(200);
  });
});

/** The cabinet's web pages as a browser without JavaScript: cookies kept by hand, redirects not followed. */
async function signedInPage() {
  const cookies = new Map<string, string>();
  const request = async (method: string, path: string, form?: Record<string, string>) => {
    const response = await fetch(new URL(path, server.url), {
      method,
      redirect: 'manual',
      headers: {
        Cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
        ...(form ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    for (const line of response.headers.getSetCookie()) {
      const [name = '', value = ''] = (line.split(';')[0] ?? '').split('=');
      cookies.set(name, value);
    }
    return response;
  };
  const csrfOf = async (response: Response) => /name="_csrf" value="([^"]+)"/.exec(await response.text())?.[1] ?? '';
  const signIn = await request('GET', '/cabinet/sign-in');
  const signedIn = await request('POST', '/cabinet/sign-in', {
    _csrf: await csrfOf(signIn),
    email: buyerEmail,
    password: 'a strong password',
  });
  expect(signedIn.status).toBe(303);
  return {
    csrf: async () => csrfOf(await request('GET', '/cabinet')),
    post: (path: string, form: Record<string, string>) => request('POST', path, form),
  };
}
