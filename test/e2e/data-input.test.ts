// Hostile text at the data server's door, and failures behind it. NUL and other controls in the query, in JSON bodies
// and in MCP arguments are refused with validation_failed naming the field, cost no quota and log no error (they used
// to reach PostgreSQL: a 500, a stack trace in the log, a counted request, and PostgreSQL's message in MCP). A failure
// on our side reaches an MCP client as a generic text with the request id; its details go to the log only.
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { json, post, testConfig } from '../helpers.ts';
import { bearer, dataKey } from '../doubles/data-setup.ts';
import { createLogger } from '../../src/log.ts';
import { createServices, type Services } from '../../src/services.ts';
import { createDataApp } from '../../src/data-app.ts';
import { listen, type RunningServer } from '../../src/http/server.ts';

// The data server with its log kept, to see what a request writes there.
let services: Services;
let running: RunningServer;
let key: string;
const logLines: Array<{ level: number; msg: string; req_id?: string; err?: { message: string }; tool?: string }> = [];

beforeAll(async () => {
  const log = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  services = createServices(testConfig(), createLogger('info', log));
  running = await listen(createDataApp(services), '127.0.0.1', 0);
  key = (await dataKey(services.db, 'pro')).key;
});
afterAll(async () => {
  await running?.stop();
  await services?.close();
});

const used = async () => (await json(await fetch(`${running.url}/v1/me`, { headers: bearer(key) }))).used as number;
const errorsLogged = () => logLines.filter((line) => line.level >= 50);
const mcp = (body: unknown, headers: Record<string, string> = {}) =>
  post(`${running.url}/mcp/`, body, {
    ...bearer(key),
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': '2025-11-25',
    ...headers,
  });
const toolCall = (name: string, args: unknown, id = 7) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

describe('control characters and lone surrogates', () => {
  it('are refused over REST with 400 validation_failed naming the field, cost nothing and log no error', async () => {
    const before = await used();
    const errorsBefore = errorsLogged().length;
    const refusals: Array<[Response, string]> = [
      [await fetch(`${running.url}/v1/tenders?q=%00`, { headers: bearer(key) }), 'q'],
      [await fetch(`${running.url}/v1/tenders?q=a%07b&country=ru`, { headers: bearer(key) }), 'q'],
      [await post(`${running.url}/v1/practice/search`, { query: 'неустойка\u0000' }, bearer(key)), 'query'],
      [
        await post(
          `${running.url}/v1/knowledge/search`,
          { query: 'закупка', corpus_keys: ['44-fz-guide\u001b'] },
          bearer(key),
        ),
        'corpus_keys.0',
      ],
      [await post(`${running.url}/v1/knowledge/search`, { query: 'x\ud800y' }, bearer(key)), 'query'],
    ];
    for (const [response, field] of refusals) {
      expect(response.status).toBe(400);
      const problem = await json(response);
      expect(problem).toMatchObject({
        code: 'validation_failed',
        errors: [{ path: field, message: expect.any(String) }],
      });
    }
    expect(await used()).toBe(before + 1); // the /v1/me that reads it
    expect(errorsLogged().slice(errorsBefore)).toEqual([]);
  });

  it('are refused in MCP arguments with a JSON-RPC invalid params error naming the field, cost nothing and log no error', async () => {
    const before = await used();
    const errorsBefore = errorsLogged().length;
    const response = await mcp(toolCall('search_practice', { query: 'a\u0000b' }));
    expect(response.status).toBe(200);
    const answer = await json(response);
    expect(answer).toMatchObject({
      jsonrpc: '2.0',
      id: 7,
      error: {
        code: -32602,
        message: expect.stringContaining('params.arguments.query must not contain control characters'),
        data: { code: 'validation_failed', errors: [{ path: 'params.arguments.query', message: expect.any(String) }] },
      },
    });
    expect(JSON.stringify(answer)).not.toMatch(/byte sequence|UTF8/);

    // A client library sees the refusal as the call's error, naming the field.
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${running.url}/mcp/`), { requestInit: { headers: bearer(key) } }),
    );
    await expect(client.callTool({ name: 'search_tenders', arguments: { query: 'x\ud800' } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('params.arguments.query must be valid Unicode text'),
    });
    await client.close();

    // Text outside the arguments, where no request id can be echoed: refused at the HTTP level.
    const notification = await mcp({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { reason: 'a\u0000' },
    });
    expect(notification.status).toBe(400);
    expect(await json(notification)).toMatchObject({
      id: null,
      error: { code: -32602, data: { code: 'validation_failed' } },
    });

    expect(await used()).toBe(before + 1);
    expect(errorsLogged().slice(errorsBefore)).toEqual([]);
  });
});

describe('a failure on our side in an MCP tool', () => {
  it('answers a generic text with the request id, logs the details under that id, and costs nothing', async () => {
    const query = services.db.query.bind(services.db);
    const broken = vi
      .spyOn(services.db, 'query')
      .mockImplementation((text: unknown, ...rest: unknown[]) =>
        typeof text === 'string' && text.includes('FROM knowledge_corpora c')
          ? Promise.reject(Object.assign(new Error('relation "knowledge_corpora" does not exist'), { code: '42P01' }))
          : (query as (...args: unknown[]) => unknown)(text, ...rest),
      );
    const requestId = `mcp-${randomUUID()}`;
    const before = await used();
    let text: string;
    try {
      const response = await mcp(toolCall('list_corpora', {}), { 'X-Request-Id': requestId });
      const event = (await response.text()).split('\n').find((line) => line.startsWith('data: '))!;
      const { result } = JSON.parse(event.slice('data: '.length));
      expect(result.isError).toBe(true);
      text = result.content[0].text;
    } finally {
      broken.mockRestore();
    }
    expect(text).toMatch(/^internal_error: /);
    expect(text).toContain(requestId);
    expect(text).not.toMatch(/relation|knowledge_corpora|42P01/);
    expect(logLines).toContainEqual(
      expect.objectContaining({
        level: 50,
        req_id: requestId,
        tool: 'list_corpora',
        err: expect.objectContaining({ message: 'relation "knowledge_corpora" does not exist' }),
      }),
    );
    expect(await used()).toBe(before + 1);
  });
});
