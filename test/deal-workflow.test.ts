// The deal workflow's durability: events of one deal arrive in order even when the receiver fails first, long
// histories continue as new without losing anything, and recorded histories still replay on today's code.
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Worker } from '@temporalio/worker';
import { execFileSync } from 'node:child_process';
import { dealWorkflowId } from '../src/deals/model.ts';
import { WORKFLOWS_PATH } from '../src/worker.ts';
import { startReceiver, type Receiver } from './webhook-receiver.ts';
import { json, post, signInFromInvitation, startTestServer, uniqueEmail, uniqueId, type TestServer } from './helpers.ts';

const HISTORIES = path.join(import.meta.dirname, 'fixtures', 'deal-histories');

let server: TestServer;
let receiver: Receiver;
let secretKey: string;
let marketplaceId: string;

beforeAll(async () => {
  receiver = await startReceiver();
  // Fast retries, and continue-as-new after a short history, so both show within a test.
  server = await startTestServer({ worker: true, env: { WEBHOOK_RETRY_BASE_SECONDS: '1', DEAL_WORKFLOW_HISTORY_LIMIT: '40' } });
  const created = await json(await post(`${server.url}/admin/marketplaces`, { name: 'Durable shop' }, { Authorization: `Bearer ${server.adminToken}` }));
  secretKey = created.secret_key;
  marketplaceId = created.id;
  await post(`${server.url}/api/mkt/webhook`, { url: receiver.url }, { 'X-Svc-Key': secretKey });
});
afterAll(async () => {
  await server?.stop();
  await receiver?.stop();
});

const key = () => ({ 'X-Svc-Key': secretKey });
const api = (path: string) => `${server.url}/api/mkt${path}`;

/** A paid deal: approve in the cabinet, hold, release. Returns the deal id and external id. */
async function paidDeal(documents = 1) {
  const buyerEmail = uniqueEmail('buyer');
  const deal = await json(await post(api('/deals'), { external_id: uniqueId('order'), buyer_email: buyerEmail, title: 'Lamp', amount: 99 }, key()));
  for (let i = 0; i < documents; i++) {
    expect((await fetch(api(`/deals/${deal.id}/documents?kind=act`), { method: 'POST', headers: key(), body: Buffer.from(`act ${i}`) })).status).toBe(201);
  }
  const approval = await json(await post(api(`/deals/${deal.id}/approval`), {}, key()));
  const buyer = await signInFromInvitation(server, buyerEmail);
  expect((await post(`${server.url}/cabinet/approvals/${approval.id}/approve`, {}, buyer)).status).toBe(200);
  expect((await post(api(`/deals/${deal.id}/escrow`), {}, key())).status).toBe(201);
  expect((await post(`${server.url}/cabinet/deals/${deal.id}/escrow/release`, {}, buyer)).status).toBe(200);
  return deal as { id: string; external_id: string };
}

const arrivals = (dealId: string) =>
  receiver.received.map((request) => ({ event: JSON.parse(request.body.toString()), headers: request.headers })).filter(({ event }) => event.id === dealId);

describe('webhook delivery of one deal', () => {
  it('retries a failing receiver with the same bytes and keeps the events in order', async () => {
    receiver.script.push({ status: 500 }, { status: 503, headers: { 'Retry-After': '1' } });
    const deal = await paidDeal();
    await expect.poll(() => arrivals(deal.id).length, { timeout: 30_000 }).toBe(5);
    const received = arrivals(deal.id);
    expect(received.map(({ event }) => event.event)).toEqual(['deal.approved', 'deal.approved', 'deal.approved', 'deal.escrow_hold', 'deal.paid']);
    const [first, second, third] = received;
    expect(second!.event).toEqual(first!.event);
    expect(third!.headers['x-svc-signature']).toBe(first!.headers['x-svc-signature']);
    expect(third!.headers['x-svc-delivery']).toBe(first!.headers['x-svc-delivery']);

    const log = await json(await fetch(`${server.url}/admin/marketplaces/${marketplaceId}/webhook-deliveries`, { headers: { Authorization: `Bearer ${server.adminToken}` } }));
    const approved = log.filter((item: { deal_id: string; event: string }) => item.deal_id === deal.id && item.event === 'deal.approved');
    expect(approved.map((item: { attempt: number; status: string; http_status: number }) => [item.attempt, item.status, item.http_status]).sort()).toEqual([
      [1, 'retrying', 500],
      [2, 'retrying', 503],
      [3, 'delivered', 200],
    ]);
  });
});

describe('long histories', () => {
  it('continue as new and keep working on the same deal', async () => {
    const deal = await paidDeal(12);
    const workflowId = dealWorkflowId(marketplaceId, deal.external_id);
    const runs = [];
    for await (const execution of server.services.temporal.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs.push(execution.status.name);
    expect(runs).toContain('CONTINUED_AS_NEW');
    await expect.poll(async () => (await server.services.temporal.workflow.getHandle(workflowId).describe()).status.name, { timeout: 20_000 }).toBe('COMPLETED');
    const state = await json(await fetch(api(`/deals/${deal.id}`), { headers: key() }));
    expect(state.status).toBe('paid');
    expect(state.documents).toHaveLength(12);
    await expect.poll(() => arrivals(deal.id).map(({ event }) => event.event), { timeout: 20_000 }).toEqual(['deal.approved', 'deal.escrow_hold', 'deal.paid']);
  });
});

describe('determinism', () => {
  it('replays recorded histories of every lifecycle on the current workflow code', async () => {
    const deal = await paidDeal();
    const handle = server.services.temporal.workflow.getHandle(dealWorkflowId(marketplaceId, deal.external_id));
    await expect.poll(async () => (await handle.describe()).status.name, { timeout: 20_000 }).toBe('COMPLETED');
    const fresh = await handle.fetchHistory();
    if (process.env.RECORD_HISTORIES === '1') {
      // The CLI writes the standard JSON history format that the Web UI downloads too.
      const json = execFileSync(inject('temporalCli'), ['workflow', 'show', '--workflow-id', handle.workflowId, '--address', inject('temporalAddress'), '--output', 'json']);
      mkdirSync(HISTORIES, { recursive: true });
      writeFileSync(path.join(HISTORIES, 'paid.json'), json);
    }
    const recorded = readdirSync(HISTORIES).filter((file) => file.endsWith('.json'));
    expect(recorded.length).toBeGreaterThan(0);
    const histories = [
      { workflowId: 'fresh', history: fresh },
      ...recorded.map((file) => ({ workflowId: file, history: JSON.parse(readFileSync(path.join(HISTORIES, file), 'utf8')) })),
    ];
    const results = [];
    for await (const result of Worker.runReplayHistories({ workflowsPath: WORKFLOWS_PATH }, histories)) results.push(result);
    expect(results.map((result) => [result.workflowId, result.error?.message ?? 'ok'])).toEqual(histories.map(({ workflowId }) => [workflowId, 'ok']));
  });
});
