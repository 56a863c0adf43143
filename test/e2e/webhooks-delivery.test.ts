// The delivery-time protections of webhooks, through the real outbox drainer (src/webhooks/outbox.ts) and PostgreSQL:
// the per-attempt timeout (WEBHOOK_TIMEOUT_SECONDS=1 here instead of 15) and, for every marketplace, the SSRF check
// repeated at delivery against DNS rebinding, with the connection pinned to the addresses that passed it. A fake
// resolver (the `lookup` seam) plays the DNS server for names under .test, which never resolve for real (RFC 2606).
// The production drainer runs with the tests' WEBHOOK_ALLOW_LOOPBACK=true; the DNS drainer with the real default, false,
// on a task queue of its own, so it sends only the deliveries written for it.
import { randomUUID } from 'node:crypto';
import diagnostics from 'node:diagnostics_channel';
import http from 'node:http';
import net, { isIP, type AddressInfo, type LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { createMarketplace } from '../../src/marketplaces/marketplaces.ts';
import { postWebhook } from '../../src/webhooks/delivery.ts';
import { checkWebhookUrl, saveWebhookEndpoint } from '../../src/webhooks/endpoints.ts';
import { insertWebhookEvent } from '../../src/webhooks/events.ts';
import { startWebhookDrainer, type WebhookDrainer } from '../../src/webhooks/outbox.ts';
import { AddressNotAllowed, resolveWebhookAddresses } from '../../src/webhooks/ssrf.ts';
import { json, startTestServer, uniqueId, type TestServer } from '../helpers.ts';
import { insertApprovedDeal } from '../factories.ts';

// ---- the fake DNS server -----------------------------------------------------------------------------------------

/** name → successive answers; each query takes the next one, the last repeats (a TTL-0 rebinding server). */
const zone = new Map<string, string[][]>();
const queries: string[] = [];

const fakeLookup: LookupFunction = (hostname, options, callback) => {
  queries.push(hostname);
  const answers = zone.get(hostname);
  const now = answers && answers.length > 1 ? answers.shift()! : answers?.[0];
  setImmediate(() => {
    if (!now) {
      callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '');
      return;
    }
    const all = now.map((address) => ({ address, family: isIP(address) }));
    if (options.all) callback(null, all);
    else callback(null, all[0].address, all[0].family);
  });
};

// ---- where webhook sockets were about to connect -------------------------------------------------------------------

/**
 * Every plain TCP client socket of this process is announced on `net.client.socket`; its `lookup` event says which
 * address it is about to connect to. For our .test names we note it (with how many times the name had been resolved
 * by then) and destroy the socket before it connects, so nothing leaves this machine.
 */
const socketLookups: { host: string; address: string | undefined; queriesBefore: number }[] = [];
const onClientSocket = (message: unknown) => {
  const { socket } = message as { socket: net.Socket };
  socket.on('lookup', (_error: Error | null, address: string | undefined, _family: unknown, host: string) => {
    if (!host.endsWith('.rebind.test')) return;
    socketLookups.push({ host, address, queriesBefore: queries.filter((name) => name === host).length });
    socket.destroy();
  });
};

/** A loopback service an attacker would like to reach: counts connections (and keeps their first bytes). */
async function loopbackService(): Promise<{ port: number; connections: Buffer[] }> {
  const connections: Buffer[] = [];
  const server = net.createServer((socket) => {
    socket.once('data', (chunk: Buffer) => {
      connections.push(chunk);
      socket.destroy();
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  stops.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.address() as AddressInfo).port, connections };
}

// ---- set-up -------------------------------------------------------------------------------------------------------

let server: TestServer;
/** The drainer as the worker runs it (its services and configuration): the timeout tests. */
let drainer: WebhookDrainer;
/** The same drainer with the fake resolver and the loopback refused (the default), for the deliveries of dnsQueue. */
let dnsDrainer: WebhookDrainer;
const dnsQueue = uniqueId('queue-dns');
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  server = await startTestServer({ env: { WEBHOOK_RETRY_BASE_SECONDS: '1', WEBHOOK_TIMEOUT_SECONDS: '1' } });
  const { services } = server;
  drainer = startWebhookDrainer(services);
  dnsDrainer = startWebhookDrainer(
    { ...services, config: { ...services.config, TEMPORAL_TASK_QUEUE: dnsQueue, WEBHOOK_ALLOW_LOOPBACK: false } },
    { lookup: fakeLookup },
  );
  diagnostics.subscribe('net.client.socket', onClientSocket);
});

afterAll(async () => {
  diagnostics.unsubscribe('net.client.socket', onClientSocket);
  await dnsDrainer?.stop();
  await drainer?.stop();
  await Promise.all(stops.map((stop) => stop()));
  await server?.stop();
});

async function endpoint(mode: 'sandbox' | 'live', url: string): Promise<string> {
  const { marketplace } = await createMarketplace(server.services.db, { name: uniqueId('shop'), mode });
  await saveWebhookEndpoint(server.services.db, server.services.masterKey, marketplace.id, url);
  return marketplace.id;
}

/**
 * A deal and one event of it, as the deal workflow's persistence activity makes them, for the drainers of `taskQueue`
 * (the production one unless said): its delivery id. The drainer sends it from the commit on.
 */
async function makeEvent(
  marketplaceId: string,
  taskQueue = server.services.config.TEMPORAL_TASK_QUEUE,
): Promise<string> {
  const deal = await insertApprovedDeal(server.services.db, marketplaceId, { title: 'Bricks', amount: 100 });
  const deliveryId = randomUUID();
  const made = await insertWebhookEvent(server.services.db, {
    eventId: randomUUID(),
    deliveryId,
    taskQueue,
    event: 'deal.approved',
    occurredAt: new Date().toISOString(),
    status: 'approved',
    deal,
  });
  expect(made).toBe(deliveryId);
  return deliveryId;
}

async function deliveryStatus(deliveryId: string): Promise<string | undefined> {
  const found = await server.services.db.query('SELECT status FROM webhook_deliveries WHERE id = $1', [deliveryId]);
  return found.rows[0]?.status;
}

/** The administrators' webhook log of the marketplace, oldest attempt first. */
async function attempts(marketplaceId: string): Promise<any[]> {
  const response = await fetch(`${server.url}/admin/marketplaces/${marketplaceId}/webhook-deliveries`, {
    headers: { Authorization: `Bearer ${server.adminToken}` },
  });
  expect(response.status).toBe(200);
  return (await json(response)).items.reverse();
}

// ---- the timeout ---------------------------------------------------------------------------------------------------

describe('WEBHOOK_TIMEOUT_SECONDS', () => {
  it('is 15 s unless set, and at most 25 (an attempt and its record stay well within the outbox claim of 60 s)', () => {
    expect(parseConfig({}).WEBHOOK_TIMEOUT_SECONDS).toBe(15);
    expect(parseConfig({ WEBHOOK_TIMEOUT_SECONDS: '25' }).WEBHOOK_TIMEOUT_SECONDS).toBe(25);
    for (const bad of ['0', '26', '1.5', 'soon'])
      expect(() => parseConfig({ WEBHOOK_TIMEOUT_SECONDS: bad })).toThrow(/WEBHOOK_TIMEOUT_SECONDS/);
  });

  it('fails an attempt the receiver accepts but never answers, logs it, closes the connection and retries', async () => {
    // The first request is read and then left hanging; later ones get 200.
    const requests: { at: number; closedAt?: number }[] = [];
    const receiver = http.createServer((request, response) => {
      const seen: { at: number; closedAt?: number } = { at: Date.now() };
      requests.push(seen);
      request.socket.on('close', () => (seen.closedAt = Date.now()));
      request.resume();
      if (requests.length > 1) response.end('ok');
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    stops.push(
      () =>
        new Promise<void>((resolve) => {
          receiver.closeAllConnections();
          receiver.close(() => resolve());
        }),
    );
    const shop = await endpoint('sandbox', `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`);
    const deliveryId = await makeEvent(shop);

    // Well before the 15 s default could end a hanging attempt.
    await expect.poll(async () => (await attempts(shop)).length, { timeout: 10_000 }).toBe(2);
    expect(await deliveryStatus(deliveryId)).toBe('delivered');
    const [first, second] = await attempts(shop);
    expect(first).toMatchObject({
      delivery_id: deliveryId,
      attempt: 1,
      status: 'retrying',
      http_status: null,
      error: 'no answer within 1 s',
    });
    expect(first.duration_ms).toBeGreaterThanOrEqual(950);
    expect(first.duration_ms).toBeLessThan(5000);
    expect(second).toMatchObject({ attempt: 2, status: 'delivered', http_status: 200, error: null });

    // Our side gave up on the hanging connection after about a second; the retry came after the ~1 s backoff.
    expect(requests).toHaveLength(2);
    expect(requests[0].closedAt! - requests[0].at).toBeGreaterThanOrEqual(900);
    expect(requests[0].closedAt! - requests[0].at).toBeLessThan(5000);
    expect(requests[1].at - requests[0].at).toBeGreaterThanOrEqual(900 + 750);
  });
});

// ---- SSRF at delivery: the resolver and the pinned connection ------------------------------------------------------

describe('resolveWebhookAddresses with a resolver', () => {
  const resolve = (
    name: string,
    options: { allowLoopback?: boolean; deadlineMs?: number; lookup?: LookupFunction } = {},
  ) => resolveWebhookAddresses(name, { lookup: fakeLookup, ...options });

  it('keeps every answer in order and refuses a name when any answer is not public or it does not resolve', async () => {
    zone.set('dual.rebind.test', [['2606:4700:4700::1111', '8.8.8.8']]);
    expect(await resolve('dual.rebind.test')).toEqual([
      { address: '2606:4700:4700::1111', family: 6 },
      { address: '8.8.8.8', family: 4 },
    ]);
    zone.set('mixed.rebind.test', [['8.8.8.8', '10.0.0.7']]);
    await expect(resolve('mixed.rebind.test')).rejects.toThrow(/resolves to 10\.0\.0\.7/);
    await expect(resolve('nowhere.rebind.test')).rejects.toBeInstanceOf(AddressNotAllowed);
    // A DNS server that never answers: refused once the deadline passes, so the attempt ends and is logged (without
    // the deadline this would wait for ever, and the test would fail by its timeout).
    const silent: LookupFunction = () => {};
    await expect(resolve('silent.rebind.test', { lookup: silent, deadlineMs: 200 })).rejects.toThrow(
      /does not resolve/,
    );
  });

  it('refuses the loopback by default and allows it, and only it, with allowLoopback', async () => {
    zone.set('self.rebind.test', [['::1', '127.0.0.1']]);
    zone.set('metadata.rebind.test', [['169.254.169.254']]);
    zone.set('nat64.rebind.test', [['64:ff9b::7f00:1']]);
    zone.set('half.rebind.test', [['127.0.0.1', '10.0.0.7']]);
    for (const name of ['self.rebind.test', '127.0.0.1', '::1', 'localhost', 'api.localhost']) {
      await expect(resolve(name), name).rejects.toBeInstanceOf(AddressNotAllowed);
    }
    expect(await resolve('self.rebind.test', { allowLoopback: true })).toEqual([
      { address: '::1', family: 6 },
      { address: '127.0.0.1', family: 4 },
    ]);
    expect(await resolve('[::1]', { allowLoopback: true })).toEqual([{ address: '::1', family: 6 }]);
    for (const name of [
      'metadata.rebind.test',
      'nat64.rebind.test',
      'half.rebind.test',
      '169.254.169.254',
      '10.0.0.1',
      'fd00::1',
    ]) {
      await expect(resolve(name, { allowLoopback: true }), name).rejects.toThrow(/is not a public or loopback address/);
    }
  });

  it('takes localhost names only as the loopback, whatever the resolver says (RFC 6761)', async () => {
    const resolver =
      (answer: string): LookupFunction =>
      (_name, options, callback) =>
        options.all
          ? callback(null, [{ address: answer, family: isIP(answer) }])
          : callback(null, answer, isIP(answer));
    expect(await resolve('localhost', { allowLoopback: true, lookup: resolver('127.0.0.1') })).toEqual([
      { address: '127.0.0.1', family: 4 },
    ]);
    await expect(resolve('shop.localhost', { allowLoopback: true, lookup: resolver('8.8.8.8') })).rejects.toThrow(
      /8\.8\.8\.8/,
    );
  });
});

describe('postWebhook with a pinned address', () => {
  it.each([true, false])(
    'connects to the pinned address, not to what DNS says (autoSelectFamily %s)',
    async (autoSelect) => {
      // Node asks the resolver for all answers when it may race families and for one otherwise: both must be pinned.
      const before = net.getDefaultAutoSelectFamily();
      net.setDefaultAutoSelectFamily(autoSelect);
      const hosts: (string | undefined)[] = [];
      const receiver = http.createServer((request, response) => {
        hosts.push(request.headers.host);
        request.resume();
        response.end('ok');
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      try {
        const port = (receiver.address() as AddressInfo).port;
        // The name does not resolve at all: only the pinned address can get the request to the receiver.
        const url = new URL(`http://only-pinned.example.test:${port}/hooks`);
        const result = await postWebhook(url, {}, Buffer.from('{}'), {
          pinned: [{ address: '127.0.0.1', family: 4 }],
          timeoutMs: 2000,
        });
        expect(result).toMatchObject({ httpStatus: 200, error: null });
        expect(hosts).toEqual([`only-pinned.example.test:${port}`]); // the URL's name still goes in the Host header
      } finally {
        net.setDefaultAutoSelectFamily(before);
        receiver.closeAllConnections();
        await new Promise<void>((resolve) => receiver.close(() => resolve()));
      }
    },
  );

  it('pins https too, with the URL name sent for TLS (SNI) so the certificate is checked against it', async () => {
    const service = await loopbackService();
    const url = new URL(`https://only-pinned.example.test:${service.port}/hooks`);
    const result = await postWebhook(url, {}, Buffer.from('{}'), {
      pinned: [{ address: '127.0.0.1', family: 4 }],
      timeoutMs: 2000,
    });
    expect(result.httpStatus).toBeNull(); // the fake service closes after the TLS ClientHello
    expect(service.connections).toHaveLength(1);
    expect(service.connections[0].includes('only-pinned.example.test')).toBe(true);
  });

  it('tries the next pinned address when the first refuses, as localhost (::1 first) needs for a 127.0.0.1 receiver', async () => {
    const receiver = http.createServer((request, response) => {
      request.resume();
      response.end('ok');
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const url = new URL(`http://only-pinned.example.test:${(receiver.address() as AddressInfo).port}/hooks`);
      const pinned = [
        { address: '::1', family: 6 as const },
        { address: '127.0.0.1', family: 4 as const },
      ];
      expect(await postWebhook(url, {}, Buffer.from('{}'), { pinned, timeoutMs: 2000 })).toMatchObject({
        httpStatus: 200,
        error: null,
      });
    } finally {
      receiver.closeAllConnections();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });
});

describe('delivery to addresses that are not public', () => {
  it('checks sandbox marketplaces too: a stored loopback URL is refused at every attempt and never connected to', async () => {
    const service = await loopbackService();
    const shop = await endpoint('sandbox', `http://127.0.0.1:${service.port}/svc`);
    const deliveryId = await makeEvent(shop, dnsQueue);

    await expect.poll(async () => (await attempts(shop)).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    const [first, second] = await attempts(shop);
    expect(await deliveryStatus(deliveryId)).toBe('retrying'); // refused, not given up: the next attempt checks again
    for (const [index, attempt] of [first, second].entries()) {
      expect(attempt).toMatchObject({
        attempt: index + 1,
        status: 'retrying',
        http_status: null,
        error: 'address not allowed: 127.0.0.1 is not a public address',
      });
    }
    expect(service.connections).toHaveLength(0);
  });
});

describe('live delivery against DNS rebinding', () => {
  it('refuses at delivery a name that was public at registration and now resolves to the loopback', async () => {
    const service = await loopbackService();
    const url = `https://hooks.rebind.test:${service.port}/svc`;
    zone.set('hooks.rebind.test', [['8.8.8.8']]);
    const { marketplace } = await createMarketplace(server.services.db, { name: uniqueId('shop'), mode: 'live' });
    await checkWebhookUrl(marketplace, url, { allowLoopback: false, lookup: fakeLookup }); // registration: a public address, accepted
    await saveWebhookEndpoint(server.services.db, server.services.masterKey, marketplace.id, url);
    zone.set('hooks.rebind.test', [['127.0.0.1']]); // the owner of the name rebinds it
    const deliveryId = await makeEvent(marketplace.id, dnsQueue);

    // Every attempt asks DNS again, is refused, logged and retried; none ever reaches the loopback service.
    await expect
      .poll(async () => (await attempts(marketplace.id)).length, { timeout: 10_000 })
      .toBeGreaterThanOrEqual(2);
    const [first, second] = await attempts(marketplace.id);
    for (const [index, attempt] of [first, second].entries()) {
      expect(attempt).toMatchObject({
        delivery_id: deliveryId,
        attempt: index + 1,
        status: 'retrying',
        http_status: null,
        error: 'address not allowed: hooks.rebind.test resolves to 127.0.0.1, which is not a public address',
      });
    }
    expect(queries.filter((name) => name === 'hooks.rebind.test').length).toBeGreaterThanOrEqual(3); // registration + 2
    expect(service.connections).toHaveLength(0);
  });

  it('connects to the address the check passed, not to what a second lookup would say', async () => {
    const service = await loopbackService();
    // A plain http URL (registration would insist on https, delivery treats both alike) so that the socket announces
    // where it connects: see onClientSocket. The https pinning is shown by postWebhook's test above.
    const url = `http://pinned.rebind.test:${service.port}/svc`;
    zone.set('pinned.rebind.test', [['8.8.8.8'], ['127.0.0.1']]); // public once, the loopback from then on
    const shop = await endpoint('live', url);
    await makeEvent(shop, dnsQueue);

    await expect.poll(async () => (await attempts(shop)).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    // Attempt 1: checked 8.8.8.8 and the socket went for 8.8.8.8, with no lookup after the check (we cut it there).
    expect(socketLookups.filter((lookup) => lookup.host === 'pinned.rebind.test')).toEqual([
      { host: 'pinned.rebind.test', address: '8.8.8.8', queriesBefore: 1 },
    ]);
    const [first, second] = await attempts(shop);
    expect(first).toMatchObject({
      attempt: 1,
      status: 'retrying',
      http_status: null,
      error: expect.stringContaining('socket hang up'),
    });
    // Attempt 2: the name now says 127.0.0.1, and the check refuses it before any socket exists.
    expect(second).toMatchObject({
      attempt: 2,
      status: 'retrying',
      http_status: null,
      error: expect.stringMatching(/^address not allowed: .*127\.0\.0\.1/),
    });
    expect(service.connections).toHaveLength(0);
  });
});
