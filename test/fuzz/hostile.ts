// The fuzz run's hostile-shape pass (issue 20, "Bounded input everywhere"): the shapes a schema-driven fuzzer never
// draws, sent to every POST, PUT and PATCH operation of both OpenAPI documents that takes JSON or a form, and to the
// data server's MCP endpoint: nesting thousands of levels deep and as deep as the body limit allows, huge arrays, long
// strings in every string field, as many fields as fit, text the text rule refuses, and a body one byte over the
// operation's limit (the document's x-body-limit-bytes). Each shape is sent to every operation of a server again and
// again, four at a time, while a probe asks that server for a cheap answer every few milliseconds. The pass prints the
// probe's p50, p99 and max and the statuses seen per shape, and fails on any 5xx (or a connection the server dropped),
// on a deep body refused with anything but validation_failed, and when the probe's slowest answer exceeds PROBE_BOUND_MS.

/** Operations per server, sent `CONCURRENCY` at a time, for at least `SHAPE_SECONDS` per shape. */
const CONCURRENCY = 4;
const SHAPE_SECONDS = 2;
/**
 * The slowest probe answer allowed while a shape is sent. Every hostile body now costs the server at most a pass or two
 * over its bytes: a few milliseconds for 64 KiB, about 20 for the 256 KiB of the largest JSON operations, and its
 * refusal names 20 fields at most. Four at a time kept the probe's slowest answer at 55 ms on this two-core machine when
 * it was quiet, and at 175 ms while other test suites loaded it (load average 5; the many-fields shape, after
 * Schemathesis had filled the database). 400 ms leaves more than twice that; before the fix one body of the finding's
 * shape held the server for seconds, and deep bodies answered 500.
 */
export const PROBE_BOUND_MS = 400;
/** The most a multipart body built here takes (its operation allows 25 MiB of evidence files; depth and width need less). */
const MULTIPART_SEND_BYTES = 1024 * 1024;
const DEFAULT_LIMIT_BYTES = 64 * 1024;
const MCP_LIMIT_BYTES = 64 * 1024;

type Kind = 'json' | 'form' | 'multipart' | 'mcp';

interface Route {
  server: 'main' | 'data';
  name: string;
  url: string;
  method: string;
  kind: Kind;
  limit: number;
  headers: Record<string, string>;
  /** Top-level properties of a JSON body, string ones apart: where long strings and huge arrays go. */
  fields: string[];
  stringFields: string[];
}

interface Request {
  route: Route;
  body: string | Buffer;
  contentType: string;
  /** A deep body: a 400 must be validation_failed. */
  deep: boolean;
}

export interface Credentials {
  admin: string;
  marketplaceKey: string;
  cabinetToken: string;
  dataKey: string;
}

const SAMPLE_ID = '00000000-0000-4000-8000-000000000000';

/** Every operation with a JSON, urlencoded or multipart body in the document, with the credential its security names. */
async function routesOf(
  server: 'main' | 'data',
  base: string,
  documentPath: string,
  credentials: Credentials,
): Promise<Route[]> {
  const document = (await (await fetch(`${base}${documentPath}`)).json()) as {
    paths: Record<string, Record<string, any>>;
  };
  const routes: Route[] = [];
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      if (!['post', 'put', 'patch'].includes(method) || !operation.requestBody) continue;
      const content = operation.requestBody.content as Record<string, { schema?: any }>;
      const type = Object.keys(content)[0];
      const kind: Kind | undefined =
        type === 'application/json'
          ? 'json'
          : type === 'application/x-www-form-urlencoded'
            ? 'form'
            : type === 'multipart/form-data'
              ? 'multipart'
              : undefined;
      if (!kind) continue; // a raw upload (a deal document) is bytes, not a shape
      const schema = content[type].schema ?? {};
      const properties = Object.entries<any>(schema.properties ?? {});
      routes.push({
        server,
        name: `${method.toUpperCase()} ${path}`,
        url: base + path.replace(/\{\w+\}/g, SAMPLE_ID),
        method: method.toUpperCase(),
        kind,
        limit: Number(operation.requestBody['x-body-limit-bytes'] ?? DEFAULT_LIMIT_BYTES),
        headers: authHeaders(operation.security, credentials),
        fields: properties.map(([name]) => name),
        stringFields: properties
          .filter(
            ([, field]) => field.type === 'string' || (Array.isArray(field.type) && field.type.includes('string')),
          )
          .map(([name]) => name),
      });
    }
  }
  return routes;
}

function authHeaders(
  security: Record<string, string[]>[] | undefined,
  credentials: Credentials,
): Record<string, string> {
  for (const scheme of (security ?? []).flatMap((requirement) => Object.keys(requirement))) {
    if (scheme === 'adminToken') return { Authorization: `Bearer ${credentials.admin}` };
    if (scheme === 'marketplaceKey') return { 'X-Svc-Key': credentials.marketplaceKey };
    if (scheme === 'cabinetToken') return { Authorization: `Bearer ${credentials.cabinetToken}` };
    if (scheme === 'dataKey') return { Authorization: `Bearer ${credentials.dataKey}` };
  }
  return {}; // anonymous, or a credential the run has none of (a widget token): refused before the body, which is fine too
}

const deepArrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const deepObjects = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
/** `unit` repeated, joined by `separator`, as often as fits in `bytes` with `overhead` bytes around it. */
const filling = (unit: (index: number) => string, separator: string, bytes: number, overhead = 0) => {
  const parts: string[] = [];
  for (let size = overhead, index = 0; ; index++) {
    const part = unit(index);
    if (size + part.length + separator.length > bytes) break;
    parts.push(part);
    size += part.length + separator.length;
  }
  return parts.join(separator);
};
/** JSON text of `open` + filling + `close` within `bytes`. */
const within = (bytes: number, open: string, unit: (index: number) => string, close: string, separator = ',') =>
  `${open}${filling(unit, separator, bytes, open.length + close.length)}${close}`;

/** A tools/call of search_tenders with these arguments (JSON text), as an MCP client sends it. */
const toolCall = (args: string) =>
  `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_tenders","arguments":${args}}}`;
const TOOL_CALL_OVERHEAD = toolCall('').length;

interface Shape {
  name: string;
  bodies: (route: Route) => { body: string | Buffer; deep?: boolean }[];
}

/** A multipart body of these text parts. */
function multipart(parts: [string, string][]): { body: Buffer; boundary: string } {
  const boundary = 'hostile-shape-boundary';
  const text = parts
    .map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
    .join('');
  return { body: Buffer.from(`${text}--${boundary}--\r\n`), boundary };
}

const sendable = (route: Route) =>
  (route.kind === 'multipart' ? Math.min(route.limit, MULTIPART_SEND_BYTES) : route.limit) - 1;

const SHAPES: Shape[] = [
  {
    name: 'deep, 3,000 levels',
    bodies: (route) => {
      if (route.kind === 'form') return [{ body: `${encodeURIComponent(`a${'[a]'.repeat(3_000)}`)}=1` }];
      if (route.kind === 'multipart') return [{ body: multipartBody([[`a${'[a]'.repeat(3_000)}`, '1']]) }];
      const wrap = route.kind === 'mcp' ? toolCall : (text: string) => text;
      return [
        { body: wrap(deepArrays(3_000)), deep: true },
        { body: wrap(deepObjects(3_000)), deep: true },
      ];
    },
  },
  {
    name: 'deep, to the size limit',
    bodies: (route) => {
      const bytes = sendable(route);
      if (route.kind === 'form') return [{ body: `a=1&${'%5Ba%5D'.repeat(Math.floor((bytes - 8) / 9))}=1` }];
      if (route.kind === 'multipart')
        return [{ body: multipartBody([[`a${'[a]'.repeat(Math.floor((bytes - 200) / 3))}`, '1']]) }];
      const overhead = route.kind === 'mcp' ? TOOL_CALL_OVERHEAD : 0;
      const wrap = route.kind === 'mcp' ? toolCall : (text: string) => text;
      return [
        { body: wrap(deepArrays(Math.floor((bytes - overhead) / 2))), deep: true },
        { body: wrap(deepObjects(Math.floor((bytes - overhead - 1) / 6))), deep: true },
      ];
    },
  },
  {
    // The finding's shape: at every level, beside the next one, 40 strings the text rule refuses. The old walk copied
    // its path and its errors at every level: the square of the depth, seconds for 800 levels.
    name: 'deep with refused text',
    bodies: (route) => {
      const level = `{"w":[${'"\\u0001",'.repeat(40)}0],"a":`;
      if (route.kind === 'form' || route.kind === 'multipart') return [];
      const overhead = route.kind === 'mcp' ? TOOL_CALL_OVERHEAD : 0;
      const depth = Math.floor((sendable(route) - overhead - 1) / (level.length + 1));
      const body = `${level.repeat(depth)}1${'}'.repeat(depth)}`;
      return [{ body: route.kind === 'mcp' ? toolCall(body) : body, deep: true }];
    },
  },
  {
    name: 'huge arrays',
    bodies: (route) => {
      const bytes = sendable(route);
      if (route.kind === 'form') return [{ body: filling(() => 'a%5B%5D=0', '&', bytes) }];
      if (route.kind === 'multipart')
        return [{ body: multipartBody([['files', filling(() => '0', ',', bytes - 200)]]) }];
      if (route.kind === 'mcp') {
        return [
          { body: toolCall(within(bytes - TOOL_CALL_OVERHEAD, '{"query":[', () => '0', ']}')) },
          { body: within(bytes, '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[', () => '""', ']}') },
        ];
      }
      const field = route.fields[0] ?? 'items';
      return [
        { body: within(bytes, '[', () => '0', ']') },
        { body: within(bytes, `{${JSON.stringify(field)}:[`, () => '"x"', ']}') },
      ];
    },
  },
  {
    name: 'long strings',
    bodies: (route) => {
      const bytes = sendable(route);
      // Long runs that some pattern may try hard to match, then a character that spoils the match at the very end.
      const runs = (room: number) => [
        'a'.repeat(room - 1) + '!',
        '1.'.repeat(Math.floor(room / 2) - 1) + '!',
        'a@a.a'.repeat(Math.floor(room / 5) - 1) + ' ',
      ];
      if (route.kind === 'form')
        return runs(bytes - 12).flatMap((run) => [
          { body: `grant_type=${encodeURIComponent(run).slice(0, bytes - 12)}` },
        ]);
      if (route.kind === 'multipart') return runs(bytes - 300).map((run) => ({ body: multipartBody([['text', run]]) }));
      if (route.kind === 'mcp')
        return runs(bytes - TOOL_CALL_OVERHEAD - 20).map((run) => ({ body: toolCall(JSON.stringify({ query: run })) }));
      const fields = route.stringFields.length > 0 ? route.stringFields : ['text'];
      return fields.flatMap((field) =>
        runs(bytes - field.length - 10).map((run) => ({ body: JSON.stringify({ [field]: run }) })),
      );
    },
  },
  {
    name: 'many fields',
    bodies: (route) => {
      const bytes = sendable(route);
      if (route.kind === 'form')
        return [{ body: filling((index) => `f${index}=`, '&', bytes) }, { body: filling(() => 'a=', '&', bytes) }];
      if (route.kind === 'multipart')
        return [
          {
            body: multipartBody(
              Array.from({ length: Math.floor(bytes / 80) }, (_, index): [string, string] => [`f${index}`, '']),
            ),
          },
        ];
      if (route.kind === 'mcp')
        return [{ body: toolCall(within(bytes - TOOL_CALL_OVERHEAD, '{', (index) => `"f${index}":0`, '}')) }];
      return [{ body: within(bytes, '{', (index) => `"f${index}":0`, '}') }];
    },
  },
  {
    name: 'refused text',
    bodies: (route) => {
      const bytes = sendable(route);
      if (route.kind === 'form') return [{ body: filling((index) => `f${index}=%01`, '&', bytes) }];
      if (route.kind === 'multipart')
        return [
          {
            body: multipartBody(
              Array.from({ length: 20 }, (_, index): [string, string] => [
                `f${index}`,
                '\u0001'.repeat(Math.floor(bytes / 25)),
              ]),
            ),
          },
        ];
      if (route.kind === 'mcp')
        return [{ body: toolCall(within(bytes - TOOL_CALL_OVERHEAD, '{"query":[', () => '"\\u0001"', ']}')) }];
      return [
        { body: within(bytes, '[', () => '"\\u0001"', ']') },
        { body: within(bytes, '{', (index) => `"\\u0001${index}":"\\ud800"`, '}') },
      ];
    },
  },
  {
    name: 'one byte over the limit',
    bodies: (route) => {
      if (route.kind === 'multipart') return []; // 25 MiB of evidence, not worth sending again and again
      const size = route.limit + 1;
      if (route.kind === 'form') return [{ body: `a=${'x'.repeat(size - 2)}` }];
      return [{ body: `{"a":"${'x'.repeat(size - 8)}"}` }];
    },
  },
];

/** Multipart bodies carry their boundary in the Content-Type: kept beside the bytes. */
const BOUNDARIES = new WeakMap<Buffer, string>();
function multipartBody(parts: [string, string][]): Buffer {
  const { body, boundary } = multipart(parts);
  BOUNDARIES.set(body, boundary);
  return body;
}

function contentType(route: Route, body: string | Buffer): string {
  if (route.kind === 'form') return 'application/x-www-form-urlencoded';
  if (route.kind === 'multipart') return `multipart/form-data; boundary=${BOUNDARIES.get(body as Buffer)}`;
  return 'application/json';
}

interface Answer {
  status: number;
  route: string;
  /** The problem's code, or an MCP error's data.code. */
  code?: string;
  deep: boolean;
}

async function send(request: Request): Promise<Answer> {
  const { route } = request;
  const extra: Record<string, string> =
    route.kind === 'mcp' ? { Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2025-11-25' } : {};
  try {
    const response = await fetch(route.url, {
      method: route.method,
      headers: { 'Content-Type': request.contentType, ...route.headers, ...extra },
      body: request.body,
    });
    const text = await response.text();
    let code: string | undefined;
    try {
      const parsed = JSON.parse(text);
      code = parsed?.jsonrpc ? parsed.error?.data?.code : parsed?.code;
    } catch {
      // an HTML page or an event stream: no code to read
    }
    return { status: response.status, route: route.name, code, deep: request.deep };
  } catch {
    return { status: 0, route: route.name, deep: request.deep };
  }
}

interface Probe {
  /** The latencies of the answers, and what went wrong with any that was not a 200. */
  stop(): Promise<{ latencies: number[]; failures: string[] }>;
}

function startProbe(url: string, headers: Record<string, string>): Probe {
  const latencies: number[] = [];
  const failures: string[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      try {
        const response = await fetch(url, { headers });
        await response.arrayBuffer();
        if (response.status !== 200) failures.push(`answered ${response.status}`);
      } catch (error) {
        failures.push(`failed: ${(error as Error).message}`);
      }
      latencies.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { latencies, failures };
    },
  };
}

/** Sends the requests again and again, CONCURRENCY at a time, for at least SHAPE_SECONDS and at least once each. */
async function flood(requests: Request[]): Promise<Answer[]> {
  const until = performance.now() + SHAPE_SECONDS * 1000;
  const queue = [...requests];
  const answers: Answer[] = [];
  const next = () => {
    if (queue.length === 0 && performance.now() < until) queue.push(...requests);
    return queue.shift();
  };
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let request = next(); request; request = next()) answers.push(await send(request));
    }),
  );
  return answers;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

/**
 * Runs the pass against a running `npm start` and prints its figures with `say`. Answers whether it held, and one
 * line for the run's closing figures.
 */
export async function hostilePass(
  urls: { main: string; data: string },
  credentials: Credentials,
  say: (line: string) => void,
): Promise<{ ok: boolean; summary: string }> {
  const routes = [
    ...(await routesOf('main', urls.main, '/api/openapi.json', credentials)),
    ...(await routesOf('data', urls.data, '/v1/openapi.json', credentials)),
    {
      server: 'data' as const,
      name: 'POST /mcp/',
      url: `${urls.data}/mcp/`,
      method: 'POST',
      kind: 'mcp' as const,
      limit: MCP_LIMIT_BYTES,
      headers: { Authorization: `Bearer ${credentials.dataKey}` },
      fields: [],
      stringFields: [],
    },
  ];
  const probes = {
    main: { url: `${urls.main}/api/mkt/ping`, headers: { 'X-Svc-Key': credentials.marketplaceKey } },
    // Static metadata: no database and no Temporal behind it, so it measures the server's own event loop.
    data: { url: `${urls.data}/.well-known/oauth-protected-resource/mcp`, headers: {} },
  };
  const count = (kind: Kind) => routes.filter((route) => route.kind === kind).length;
  say(
    `▸ Hostile shapes: ${routes.length} operations (${count('json')} JSON, ${count('form')} urlencoded, ${count('multipart')} multipart, ${count('mcp')} MCP), ` +
      `${CONCURRENCY} at a time for ${SHAPE_SECONDS} s per shape and server; probe bound ${PROBE_BOUND_MS} ms`,
  );
  for (const probe of Object.values(probes))
    for (let warm = 0; warm < 5; warm++) await (await fetch(probe.url, { headers: probe.headers })).arrayBuffer();

  const problems: string[] = [];
  let worst = 0;
  let sent = 0;
  say(`  ${'server'.padEnd(6)} ${'shape'.padEnd(24)} ${'requests'.padStart(8)}  probe p50 / p99 / max (ms)  statuses`);
  for (const server of ['main', 'data'] as const) {
    for (const shape of SHAPES) {
      const requests = routes
        .filter((route) => route.server === server)
        .flatMap((route) =>
          shape
            .bodies(route)
            .map(({ body, deep }) => ({ route, body, deep: deep ?? false, contentType: contentType(route, body) })),
        );
      if (requests.length === 0) continue;
      const probe = startProbe(probes[server].url, probes[server].headers);
      const answers = await flood(requests);
      const { latencies: measured, failures } = await probe.stop();
      const latencies = measured.sort((a, b) => a - b);
      if (failures.length > 0)
        problems.push(`${server} ${shape.name}: the probe ${failures[0]} (${failures.length} times)`);
      sent += answers.length;
      const statuses = new Map<number, number>();
      for (const answer of answers) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      const max = latencies.at(-1) ?? 0;
      worst = Math.max(worst, max);
      say(
        `  ${server.padEnd(6)} ${shape.name.padEnd(24)} ${String(answers.length).padStart(8)}  ` +
          `${[percentile(latencies, 50), percentile(latencies, 99), max].map((ms) => ms.toFixed(0).padStart(5)).join(' /')}       ` +
          [...statuses]
            .sort(([a], [b]) => a - b)
            .map(([status, times]) => `${status || 'dropped'}×${times}`)
            .join(' '),
      );
      const broken = answers.filter((answer) => answer.status >= 500 || answer.status === 0);
      for (const route of new Set(broken.map((answer) => answer.route)))
        problems.push(`${server} ${shape.name}: ${route} answered 5xx or dropped the connection`);
      const misnamed = answers.filter(
        (answer) => answer.deep && answer.status === 400 && answer.code !== 'validation_failed',
      );
      for (const route of new Set(misnamed.map((answer) => answer.route)))
        problems.push(
          `${server} ${shape.name}: ${route} refused a deep body as ${misnamed.find((a) => a.route === route)!.code}, not validation_failed`,
        );
      if (max > PROBE_BOUND_MS)
        problems.push(`${server} ${shape.name}: the probe waited ${max.toFixed(0)} ms (bound ${PROBE_BOUND_MS} ms)`);
    }
  }
  for (const problem of problems) say(`  ✗ ${problem}`);
  say(
    problems.length === 0
      ? `  ✓ no 5xx, every deep body refused as validation_failed, the probe within ${PROBE_BOUND_MS} ms`
      : `  ${problems.length} problems`,
  );
  return {
    ok: problems.length === 0,
    summary: `hostile ${routes.length} operations; ${sent} requests; probe max ${worst.toFixed(0)} ms (bound ${PROBE_BOUND_MS}); ${problems.length} problems`,
  };
}
