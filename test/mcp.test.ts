// The MCP endpoint over real HTTP with real clients: the v1 SDK client (2025-11-25, as today's agents connect) and
// the v2 client pinned to the 2026-07-28 revision. Tools give what their REST twins give; only tools/call counts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { json, post, startTestServer, type TestServer } from './helpers.ts';
import { bearer, dataKey, withSampleData } from './doubles/data-setup.ts';

let server: TestServer;
let key: string;
let accountId: string;

beforeAll(async () => {
  server = await startTestServer({ kind: 'data' });
  await withSampleData(server.services.db);
  ({ key, account_id: accountId } = await dataKey(server.services.db, 'pro'));
});
afterAll(() => server?.stop());

const used = async () =>
  Number((await server.services.db.query('SELECT coalesce(sum(used), 0) AS n FROM data_usage WHERE account_id = $1', [accountId])).rows[0].n);

async function connectV1(path = '/mcp/') {
  const client = new ClientV1({ name: 'test-v1', version: '1.0.0' });
  const transport = new TransportV1(new URL(`${server.url}${path}`), { requestInit: { headers: bearer(key) } });
  await client.connect(transport);
  return { client, transport };
}

async function connectV2() {
  const client = new ClientV2({ name: 'test-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new TransportV2(new URL(`${server.url}/mcp/`), { requestInit: { headers: bearer(key) } }));
  return client;
}

const TOOLS = ['get_tender', 'list_corpora', 'list_sources', 'search_knowledge', 'search_practice', 'search_tenders', 'tender_countries', 'tender_facets'];

describe('MCP with the v1 SDK client (2025-11-25)', () => {
  it('lists the eight read-only tools with described input and output schemas; housekeeping is free', async () => {
    const before = await used();
    const { client, transport } = await connectV1();
    expect(transport.protocolVersion).toBe('2025-11-25');
    const { tools } = await client.listTools();
    await client.ping();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
    for (const tool of tools) {
      expect(tool.description!.length, tool.name).toBeGreaterThan(20);
      expect(tool.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
    }
    const search = tools.find((t) => t.name === 'search_tenders')!;
    expect((search.inputSchema.properties as Record<string, { description?: string }>).q!.description).toContain('поставки');
    await client.close();
    expect(await used()).toBe(before);
  });

  it('answers tools/call with structuredContent and the same JSON as text, as REST does, counting one request', async () => {
    const { client } = await connectV1('/mcp'); // without the trailing slash too
    const before = await used();
    const result = await client.callTool({ name: 'search_tenders', arguments: { q: 'поставки', country: 'ru', limit: 3 } });
    expect(await used()).toBe(before + 1);
    expect(result.isError).toBeFalsy();
    const structured = result.structuredContent as { items: Array<{ id: string; country: string }>; limit: number };
    expect(structured.items).toHaveLength(3);
    expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toEqual(structured);
    const rest = await json(await fetch(`${server.url}/v1/tenders?q=${encodeURIComponent('поставки')}&country=RU&limit=3`, { headers: bearer(key) }));
    expect(structured).toEqual(rest);

    const card = await client.callTool({ name: 'get_tender', arguments: { id: structured.items[0]!.id } });
    expect(card.structuredContent).toMatchObject({ id: structured.items[0]!.id, source_record: expect.any(Object) });
    const practice = await client.callTool({ name: 'search_practice', arguments: { query: 'неустойка', top_k: 2 } });
    expect((practice.structuredContent as { items: unknown[] }).items).toHaveLength(2);
    await client.close();
  });

  it('reports failures as isError results: an unknown tender, an unknown corpus, invalid arguments', async () => {
    const { client } = await connectV1();
    const missing = await client.callTool({ name: 'get_tender', arguments: { id: 'nothing:here' } });
    expect(missing.isError).toBe(true);
    expect((missing.content as Array<{ text: string }>)[0]!.text).toContain('not_found');
    const corpus = await client.callTool({ name: 'search_knowledge', arguments: { query: 'x', corpus_keys: ['nope'] } });
    expect(corpus.isError).toBe(true);
    expect((corpus.content as Array<{ text: string }>)[0]!.text).toContain('unknown_corpus');
    const invalid = await client.callTool({ name: 'search_tenders', arguments: { limit: 1000 } });
    expect(invalid.isError).toBe(true);
    await client.close();
  });
});

describe('MCP with the v2 client pinned to 2026-07-28', () => {
  it('speaks the stateless revision: tools and calls', async () => {
    const client = await connectV2();
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
    const before = await used();
    const countries = await client.callTool({ name: 'tender_countries', arguments: {} });
    expect(await used()).toBe(before + 1);
    const items = (countries.structuredContent as { items: Array<{ code: string }> }).items;
    expect(items.map((c) => c.code)).toContain('RU');
    const corpora = await client.callTool({ name: 'list_corpora', arguments: {} });
    expect((corpora.structuredContent as { items: unknown[] }).items.length).toBeGreaterThanOrEqual(2);
    await client.close();
  });
});

describe('MCP authentication and quota', () => {
  it('answers 401 with a Bearer challenge pointing at the RFC 9728 metadata', async () => {
    const response = await post(`${server.url}/mcp/`, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { Accept: 'application/json, text/event-stream' });
    expect(response.status).toBe(401);
    const challenge = response.headers.get('www-authenticate')!;
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)![1]!;
    expect(metadataUrl).toBe(`${server.services.config.MCP_URL}/.well-known/oauth-protected-resource/mcp`);
    const metadata = await json(await fetch(`${server.url}/.well-known/oauth-protected-resource/mcp`));
    expect(metadata).toMatchObject({ resource: `${server.services.config.MCP_URL}/mcp/`, bearer_methods_supported: ['header'] });
    expect((await fetch(`${server.url}/.well-known/oauth-protected-resource`)).status).toBe(200);
  });

  it('refuses tools/call with 429 quota_exceeded once the quota is spent, but not housekeeping', async () => {
    const spent = await dataKey(server.services.db, 'free');
    await server.services.db.query(
      `INSERT INTO data_usage (account_id, month, used) VALUES ($1, date_trunc('month', now() AT TIME ZONE 'UTC')::date, 1000)`,
      [spent.account_id],
    );
    const headers = { ...bearer(spent.key), Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2025-11-25' };
    const list = await post(`${server.url}/mcp/`, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers);
    expect(list.status).toBe(200);
    expect(list.headers.get('ratelimit')).toMatch(/^"monthly";r=0;t=\d+$/);
    const call = await post(`${server.url}/mcp/`, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_corpora', arguments: {} } }, headers);
    expect(call.status).toBe(429);
    expect(call.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await json(call)).code).toBe('quota_exceeded');
  });
});
