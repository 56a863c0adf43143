// The MCP endpoint over real HTTP with real clients: the v1 SDK client (2025-11-25, as today's agents connect) and
// the v2 client pinned to the 2026-07-28 revision. Tools give what their REST twins give; only tools/call the
// protocol layer accepts counts. (Hostile text and failures on our side: data-input.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { json, post, startTestServer, type TestServer } from '../helpers.ts';
import { bearer, dataKey, withSampleData } from '../doubles/data-setup.ts';

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
  Number(
    (
      await server.services.db.query('SELECT coalesce(sum(used), 0) AS n FROM data_usage WHERE account_id = $1', [
        accountId,
      ])
    ).rows[0].n,
  );

async function connectV1(path = '/mcp/') {
  const client = new ClientV1({ name: 'test-v1', version: '1.0.0' });
  const transport = new TransportV1(new URL(`${server.url}${path}`), { requestInit: { headers: bearer(key) } });
  await client.connect(transport);
  return { client, transport };
}

async function connectV2() {
  const client = new ClientV2(
    { name: 'test-v2', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new TransportV2(new URL(`${server.url}/mcp/`), { requestInit: { headers: bearer(key) } }));
  return client;
}

/** A tools/call (or any message) over plain HTTP, as a 2025-11-25 client sends it. */
const send = (body: unknown, headers: Record<string, string> = {}) =>
  post(`${server.url}/mcp/`, body, {
    ...bearer(key),
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': '2025-11-25',
    ...headers,
  });
const toolCall = (name: string, args: unknown, id = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

/** The JSON-RPC answer, whether it came as JSON or as the one event of an SSE stream. */
async function answer(response: Response): Promise<any> {
  const text = await response.text();
  if (!response.headers.get('content-type')?.includes('text/event-stream')) return JSON.parse(text);
  return JSON.parse(
    text
      .split('\n')
      .find((line) => line.startsWith('data: '))!
      .slice('data: '.length),
  );
}

const TOOLS = [
  'get_tender',
  'list_corpora',
  'list_sources',
  'search_knowledge',
  'search_practice',
  'search_tenders',
  'tender_countries',
  'tender_facets',
];

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
    expect((search.inputSchema.properties as Record<string, { description?: string }>).query.description).toContain(
      'лекарственные препараты',
    );
    for (const filter of ['status', 'deadline_from', 'value_min', 'classification', 'buyer', 'law', 'sort', 'cursor']) {
      expect(search.inputSchema.properties, filter).toHaveProperty(filter);
      expect(search.description, filter).toContain(filter);
    }
    await client.close();
    expect(await used()).toBe(before);
  });

  it('answers tools/call with structuredContent and the same JSON as text, as REST does, counting one request', async () => {
    const { client } = await connectV1('/mcp'); // without the trailing slash too
    const before = await used();
    const result = await client.callTool({
      name: 'search_tenders',
      arguments: { query: 'поставки', country: 'ru', limit: 3 },
    });
    expect(await used()).toBe(before + 1);
    expect(result.isError).toBeFalsy();
    const structured = result.structuredContent as { items: Array<{ id: string; country: string }>; limit: number };
    expect(structured.items).toHaveLength(3);
    expect(JSON.parse((result.content as Array<{ text: string }>)[0].text)).toEqual(structured);
    const rest = await json(
      await fetch(`${server.url}/v1/tenders?q=${encodeURIComponent('поставки')}&country=RU&limit=3`, {
        headers: bearer(key),
      }),
    );
    expect(structured).toEqual(rest);

    const card = await client.callTool({ name: 'get_tender', arguments: { id: structured.items[0].id } });
    expect(card.structuredContent).toMatchObject({ id: structured.items[0].id, source_record: expect.any(Object) });
    const practice = await client.callTool({ name: 'search_practice', arguments: { query: 'неустойка', top_k: 2 } });
    expect((practice.structuredContent as { items: unknown[] }).items).toHaveLength(2);
    await client.close();
  });

  it('reports failures as isError results: an unknown tender, an unknown corpus (both count), invalid arguments (free)', async () => {
    const { client } = await connectV1();
    const before = await used();
    const missing = await client.callTool({ name: 'get_tender', arguments: { id: 'nothing:here' } });
    expect(missing.isError).toBe(true);
    expect((missing.content as Array<{ text: string }>)[0].text).toContain('not_found');
    const corpus = await client.callTool({
      name: 'search_knowledge',
      arguments: { query: 'x', corpus_keys: ['nope'] },
    });
    expect(corpus.isError).toBe(true);
    expect((corpus.content as Array<{ text: string }>)[0].text).toContain('unknown_corpus');
    const invalid = await client.callTool({ name: 'search_tenders', arguments: { limit: 1000 } });
    expect(invalid.isError).toBe(true);
    expect(await used()).toBe(before + 2);
    await client.close();
  });

  it('declares strict input schemas: a misspelt argument is refused, named, and costs nothing', async () => {
    const { client } = await connectV1();
    const { tools } = await client.listTools();
    for (const tool of tools) expect(tool.inputSchema.additionalProperties, tool.name).toBe(false);
    const before = await used();
    // Every MCP search tool calls its text `query`; REST's `q` is refused, never ignored (it would list the newest tenders).
    const misspelt = await client.callTool({ name: 'search_tenders', arguments: { q: 'поставки', limit: 1 } });
    expect(misspelt.isError).toBe(true);
    expect(misspelt.structuredContent).toBeUndefined();
    expect((misspelt.content as Array<{ text: string }>)[0].text).toContain('"q"');
    expect(await used()).toBe(before);
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
    const response = await post(
      `${server.url}/mcp/`,
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { Accept: 'application/json, text/event-stream' },
    );
    expect(response.status).toBe(401);
    const challenge = response.headers.get('www-authenticate')!;
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)![1];
    expect(metadataUrl).toBe(`${server.services.config.MCP_URL}/.well-known/oauth-protected-resource/mcp`);
    const metadata = await json(await fetch(`${server.url}/.well-known/oauth-protected-resource/mcp`));
    expect(metadata).toMatchObject({
      resource: `${server.services.config.MCP_URL}/mcp/`,
      bearer_methods_supported: ['header'],
    });
    expect((await fetch(`${server.url}/.well-known/oauth-protected-resource`)).status).toBe(200);
  });

  it('refuses tools/call with 429 quota_exceeded once the quota is spent, but not housekeeping', async () => {
    const spent = await dataKey(server.services.db, 'free');
    await server.services.db.query(
      `INSERT INTO data_usage (account_id, month, used) VALUES ($1, date_trunc('month', now() AT TIME ZONE 'UTC')::date, 1000)`,
      [spent.account_id],
    );
    const headers = {
      ...bearer(spent.key),
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2025-11-25',
    };
    const list = await post(`${server.url}/mcp/`, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers);
    expect(list.status).toBe(200);
    expect(list.headers.get('ratelimit')).toMatch(/^"monthly";r=0;t=\d+$/);
    const call = await post(
      `${server.url}/mcp/`,
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_corpora', arguments: {} } },
      headers,
    );
    expect(call.status).toBe(429);
    expect(call.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await json(call)).code).toBe('quota_exceeded');
  });
});

describe('MCP quota: only tools/call the protocol layer accepts counts', () => {
  it('an unknown tool, a wrong Accept, a batch, invalid arguments and unknown methods cost nothing; an accepted call counts', async () => {
    const before = await used();
    const unknown = await send(toolCall('no_such_tool', {}));
    expect(unknown.status).toBe(200);
    expect((await answer(unknown)).error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('no_such_tool'),
    });

    const notAcceptable = await send(toolCall('list_corpora', {}), { Accept: 'application/json' });
    expect(notAcceptable.status).toBe(406);

    // The 2025-11-25 and 2026-07-28 revisions have no batches; the SDK alone would run every call in one.
    const batch = await send([toolCall('list_corpora', {}, 1), toolCall('list_corpora', {}, 2)]);
    expect(batch.status).toBe(400);
    expect(await json(batch)).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: expect.stringContaining('batches') },
    });

    const invalid = await answer(await send(toolCall('search_practice', { query: 'неустойка', top_k: 500 })));
    expect(invalid.result).toMatchObject({ isError: true });

    const notATool = await send({ jsonrpc: '2.0', id: 1, method: 'no/such_method' });
    expect((await answer(notATool)).error).toMatchObject({ code: -32601 });
    expect(await used()).toBe(before);

    const accepted = await answer(await send(toolCall('list_corpora', {})));
    expect(accepted.result.isError).toBeFalsy();
    expect(await used()).toBe(before + 1);
  });
});
