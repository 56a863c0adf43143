// The cluster's load balancer (src/dev/proxy.ts) against main servers of its own: round robin, a refused connection
// tried on the next, and a pooled connection given up before the main server would close it under a request.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startProxy, type RunningProxy } from '../../src/dev/proxy.ts';

interface Upstream {
  url: string;
  /** Each connection the upstream accepted, and when the proxy's side closed it (undefined while open). */
  connections: { socket: Socket; closedAt?: number }[];
  server: http.Server;
}

const running: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const item of running.splice(0)) await item.close();
});

async function upstream(name: string, keepAliveSeconds = 5): Promise<Upstream> {
  const server = http.createServer((_request, response) => response.end(name));
  server.keepAliveTimeout = keepAliveSeconds * 1000;
  const connections: Upstream['connections'] = [];
  server.on('connection', (socket: Socket) => {
    const entry: Upstream['connections'][number] = { socket };
    connections.push(entry);
    // 'end': the other side (the proxy) closed its half; a close the upstream makes itself emits no 'end' first.
    socket.on('end', () => (entry.closedAt = Date.now()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  running.push({
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections, server };
}

async function proxy(upstreams: string[]): Promise<RunningProxy> {
  const started = await startProxy({ host: '127.0.0.1', port: 0, upstreams });
  running.unshift({ close: () => started.stop() });
  return started;
}

const get = async (url: string) => {
  const response = await fetch(url);
  return { status: response.status, text: await response.text() };
};

describe('the cluster proxy', () => {
  it('sends requests to its main servers in turn', async () => {
    const [one, two] = [await upstream('one'), await upstream('two')];
    const { url } = await proxy([one.url, two.url]);
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push((await get(`${url}/ping`)).text);
    expect(answers).toEqual(['one', 'two', 'one', 'two']);
  });

  it('tries the next main server when one refuses the connection, and answers 502 when none takes it', async () => {
    const one = await upstream('one');
    const gone = await upstream('gone');
    await new Promise<void>((resolve) => gone.server.close(() => resolve()));
    const { url } = await proxy([gone.url, one.url]);
    expect(await get(`${url}/a`)).toEqual({ status: 200, text: 'one' });
    expect(await get(`${url}/b`)).toEqual({ status: 200, text: 'one' });

    const { url: nowhere } = await proxy([gone.url]);
    const refused = await get(`${nowhere}/c`);
    expect(refused.status).toBe(502);
    expect(JSON.parse(refused.text)).toMatchObject({ code: 'bad_gateway' });
  });

  it('gives a pooled connection up before the main server’s keep-alive timeout, so no request meets its close', async () => {
    // A 2 s keep-alive announced: the proxy lets the idle connection go after 1 s; the server would close it at 2 s.
    const one = await upstream('one', 2);
    const { url } = await proxy([one.url]);
    const sent = Date.now();
    expect((await get(`${url}/first`)).text).toBe('one');
    await new Promise((resolve) => setTimeout(resolve, 1600));
    expect(one.connections).toHaveLength(1);
    expect(one.connections[0].closedAt).toBeDefined();
    expect(one.connections[0].closedAt! - sent).toBeLessThan(1600);
    // The next request gets a connection of its own.
    expect((await get(`${url}/second`)).text).toBe('one');
    expect(one.connections).toHaveLength(2);
  });
});
