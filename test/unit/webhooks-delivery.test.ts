// How webhook attempts use connections (src/webhooks/delivery.ts), against receivers on the loopback in this process:
// an endpoint's attempts share a kept-alive connection, but only one opened to the same origin at the same checked
// addresses; an answer is read to its end only when it is small; a pooled connection the receiver closed costs no
// failed attempt. The pinning itself, through the outbox and a fake DNS server, is test/e2e/webhooks-delivery.test.ts.
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { postWebhook, RESPONSE_EXCERPT_BYTES } from '../../src/webhooks/delivery.ts';
import type { CheckedAddress } from '../../src/webhooks/ssrf.ts';

interface Receiver {
  port: number;
  /** Every connection the receiver accepted, in order. */
  connections: Socket[];
  /** Every request it got: on which connection (its index), with which Host header. */
  requests: { connection: number; host: string | undefined }[];
}

const stops: (() => Promise<void>)[] = [];

afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
  vi.useRealTimers();
});

/** A receiver on 127.0.0.1 that answers each request with `answer`, given how many requests its connection had before. */
async function receiver(
  answer: (response: http.ServerResponse, earlier: number, request: http.IncomingMessage) => void = (response) =>
    response.end('ok'),
): Promise<Receiver> {
  const connections: Socket[] = [];
  const requests: Receiver['requests'] = [];
  const server = http.createServer((request, response) => {
    const connection = connections.indexOf(request.socket);
    const earlier = requests.filter((seen) => seen.connection === connection).length;
    requests.push({ connection, host: request.headers.host });
    request.resume();
    answer(response, earlier, request);
  });
  server.on('connection', (socket: Socket) => connections.push(socket));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  stops.push(async () => {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  });
  return { port: (server.address() as AddressInfo).port, connections, requests };
}

const LOOPBACK: CheckedAddress[] = [{ address: '127.0.0.1', family: 4 }];

function post(url: string, pinned = LOOPBACK) {
  return postWebhook(new URL(url), { 'Content-Type': 'application/json' }, Buffer.from('{"id":"evt_1"}'), {
    pinned,
    timeoutMs: 5000,
  });
}

/** A body of `size` bytes whose first RESPONSE_EXCERPT_BYTES are "a" and the rest "b", so a cut excerpt shows. */
function body(size: number): Buffer {
  return Buffer.alloc(size, 'b').fill('a', 0, RESPONSE_EXCERPT_BYTES);
}

describe('postWebhook keeps connections alive', () => {
  it("sends an endpoint's attempts over one connection, small answers read to their end", async () => {
    const small = body(40 * 1024);
    const hooks = await receiver((response, earlier) => {
      if (earlier === 0)
        response.end(small); // with Content-Length
      else if (earlier === 1) {
        response.write(small.subarray(0, 20_000)); // chunked, with no length said beforehand
        response.end(small.subarray(20_000));
      } else response.writeHead(204).end();
    });
    const url = `http://hooks.example.test:${hooks.port}/svc`;
    const results = [await post(url), await post(url), await post(url)];

    expect(results.map(({ httpStatus, error }) => [httpStatus, error])).toEqual([
      [200, null],
      [200, null],
      [204, null],
    ]);
    expect(results[0].responseExcerpt).toBe('a'.repeat(RESPONSE_EXCERPT_BYTES));
    expect(results[1].responseExcerpt).toBe('a'.repeat(RESPONSE_EXCERPT_BYTES));
    expect(results[2].responseExcerpt).toBe('');
    expect(hooks.connections).toHaveLength(1);
    expect(hooks.requests).toHaveLength(3);
  });

  it.each([
    ['says a length over 64 KiB', (response: http.ServerResponse) => response.end(body(256 * 1024))],
    [
      'goes on past 64 KiB with no length said',
      (response: http.ServerResponse) => {
        response.write(body(80 * 1024));
        response.end();
      },
    ],
    [
      'never ends',
      (response: http.ServerResponse) => {
        const more = () => {
          while (response.write(body(16 * 1024)));
        };
        response.on('drain', more);
        more();
      },
    ],
  ])('drops the connection of an answer that %s, keeping its excerpt', async (_case, answer) => {
    const hooks = await receiver((response, _earlier, request) =>
      request.url === '/large' ? answer(response) : response.end('ok'),
    );
    const first = await post(`http://hooks.example.test:${hooks.port}/large`);
    expect(first).toMatchObject({ httpStatus: 200, error: null, responseExcerpt: 'a'.repeat(RESPONSE_EXCERPT_BYTES) });

    // Straight after: a connection put back in the pool would carry this request.
    expect(await post(`http://hooks.example.test:${hooks.port}/small`)).toMatchObject({ httpStatus: 200 });
    expect(hooks.connections).toHaveLength(2);
    expect(hooks.requests.map(({ connection }) => connection)).toEqual([0, 1]);
  });

  it('opens a connection of its own for another set of checked addresses or another host', async () => {
    const hooks = await receiver();
    const url = `http://hooks.example.test:${hooks.port}/svc`;
    const both: CheckedAddress[] = [
      { address: '127.0.0.2', family: 4 },
      { address: '127.0.0.1', family: 4 },
    ];
    expect(await post(url)).toMatchObject({ httpStatus: 200 });
    // DNS now answers another address too: it passed the check, but the connection to the old one is not taken.
    expect(await post(url, [...both].reverse())).toMatchObject({ httpStatus: 200 });
    expect(hooks.connections).toHaveLength(2);
    // The same set in another order (a round-robin resolver) is the same set.
    expect(await post(url, both)).toMatchObject({ httpStatus: 200 });
    expect(hooks.connections).toHaveLength(2);

    // DNS moved the name to an address where nothing listens: the attempt goes there, not over a pooled connection.
    const moved = await post(url, [{ address: '127.0.0.2', family: 4 }]);
    expect(moved).toMatchObject({ httpStatus: null, error: expect.stringMatching(/^ECONNREFUSED/) });

    // Another name at the same address and port is another origin.
    expect(await post(`http://other.example.test:${hooks.port}/svc`)).toMatchObject({ httpStatus: 200 });
    expect(await post(url)).toMatchObject({ httpStatus: 200 });
    expect(hooks.requests).toEqual([
      { connection: 0, host: `hooks.example.test:${hooks.port}` },
      { connection: 1, host: `hooks.example.test:${hooks.port}` },
      { connection: 1, host: `hooks.example.test:${hooks.port}` },
      { connection: 2, host: `other.example.test:${hooks.port}` },
      { connection: 0, host: `hooks.example.test:${hooks.port}` },
    ]);
  });
});

describe('postWebhook and connections the receiver closed', () => {
  it('sends again on a new connection when a pooled one is closed under the request, before any answer', async () => {
    // A receiver that drops every connection's second request unanswered: its idle-close racing our request.
    const hooks = await receiver((response, earlier) =>
      earlier === 0 ? response.end('ok') : response.socket?.destroy(),
    );
    const url = `http://hooks.example.test:${hooks.port}/svc`;
    expect(await post(url)).toMatchObject({ httpStatus: 200, error: null });
    expect(await post(url)).toMatchObject({ httpStatus: 200, error: null, responseExcerpt: 'ok' });
    expect(hooks.requests.map(({ connection }) => connection)).toEqual([0, 0, 1]);
  });

  it('tries a new connection once only, and a connection it opened not again', async () => {
    let drop = false;
    const hooks = await receiver((response) => (drop ? response.socket?.destroy() : response.end('ok')));
    const url = `http://hooks.example.test:${hooks.port}/svc`;
    expect(await post(url)).toMatchObject({ httpStatus: 200 });
    drop = true;
    // The pooled connection, then a new one: both dropped, and that is the attempt's failure.
    expect(await post(url)).toMatchObject({ httpStatus: null, error: 'ECONNRESET: socket hang up' });
    expect(hooks.requests.map(({ connection }) => connection)).toEqual([0, 0, 1]);
    // No connection in the pool now: a dropped request on a new connection fails at once.
    expect(await post(url)).toMatchObject({ httpStatus: null, error: 'ECONNRESET: socket hang up' });
    expect(hooks.requests.map(({ connection }) => connection)).toEqual([0, 0, 1, 2]);
  });

  it('records no failure when the receiver closed the pooled connection while it idled', async () => {
    const hooks = await receiver();
    const url = `http://hooks.example.test:${hooks.port}/svc`;
    for (let round = 0; round < 3; round += 1) {
      expect(await post(url)).toMatchObject({ httpStatus: 200, error: null });
      // The receiver's keep-alive timeout, in effect: whether our side has seen the close by the next request or not.
      const open = hooks.connections.filter((connection) => !connection.destroyed);
      for (const connection of open) connection.destroy();
      await Promise.all(open.map((connection) => once(connection, 'close')));
    }
    expect(await post(url)).toMatchObject({ httpStatus: 200, error: null });
  });
});

describe('the pool of agents', () => {
  it('drops an endpoint unused for a minute, with its idle connections', async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const hooks = await receiver();
    const other = await receiver();
    const url = `http://hooks.example.test:${hooks.port}/svc`;
    expect(await post(url)).toMatchObject({ httpStatus: 200 });
    vi.advanceTimersByTime(59_000);
    expect(await post(url)).toMatchObject({ httpStatus: 200 });
    expect(hooks.connections).toHaveLength(1); // used again within the minute: kept

    vi.advanceTimersByTime(61_000);
    // Any attempt drops what was unused for a minute; the connection, though younger than its idle timeout, goes too.
    expect(await post(`http://other.example.test:${other.port}/svc`)).toMatchObject({ httpStatus: 200 });
    expect(await post(url)).toMatchObject({ httpStatus: 200 });
    expect(hooks.connections).toHaveLength(2);
  });
});
