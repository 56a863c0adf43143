// Routes declared once with zod schemas: the same declaration validates requests and writes the OpenAPI 3.1 document,
// so the document cannot drift from the code.
import { METHODS } from 'node:http';
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { z } from 'zod';
import { readJsonBody, SMALL_BODY_LIMIT_BYTES } from './body.ts';
import { IDEMPOTENCY_HEADER, type Idempotency } from './idempotency.ts';
import { Problem, validationFailed } from './problem.ts';
import { MAX_DEPTH } from './text.ts';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  /** Defaults to application/json when a schema is given. */
  contentType?: string;
  /** Other media types the same answer comes in, chosen by the request's Accept (the ledger's text/csv). */
  also?: Record<string, z.ZodType | undefined>;
}

export interface RouteDefinition<
  B extends z.ZodType = z.ZodUnknown,
  Q extends z.ZodType = z.ZodUnknown,
  P extends z.ZodType = z.ZodUnknown,
> {
  method: Method;
  /** OpenAPI-style template, `/api/mkt/deals/{deal_id}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  /** Security scheme names, for the document (`anonymous`: may also come without); enforcement is the `use` middleware. */
  security?: string[];
  /** Runs before validation, e.g. authentication, so a bad credential is 401 before a bad body is 400. */
  use?: Middleware[];
  /** A JSON body, validated. */
  body?: B;
  /** A body as a client would send one, for the reference (Swagger UI shows it instead of values made up from rules). */
  bodyExample?: z.input<B>;
  /** A body the handler reads itself (file uploads); documented only, as `schema` when given (a multipart form's fields). */
  /** A body read by the handler itself; `required: false` when the operation also works without one. */
  rawBody?: { contentType: string; description: string; schema?: z.ZodType; required?: boolean };
  /**
   * The most bytes the body may have, 413 payload_too_large beyond; documented on the operation (`x-body-limit-bytes`).
   * A JSON body is read under it, SMALL_BODY_LIMIT_BYTES (64 KiB) when not given; a rawBody route states the limit its
   * handler reads with, and every read of the body is capped at it too (body.ts readRawBody).
   */
  bodyLimitBytes?: number;
  query?: Q;
  params?: P;
  responses: Record<number, ResponseSpec>;
  /**
   * A money-moving route: an optional Idempotency-Key header makes a retry answer the first attempt's status and body
   * (src/http/idempotency.ts), documented as a header parameter.
   */
  idempotent?: Idempotency;
  /** Reshapes the problems of this route's own validation (SSO endpoints add RFC 6749's `error`). */
  mapProblem?: (problem: Problem) => Problem;
  handler: (
    ctx: Context,
    input: { body: z.output<B>; query: z.output<Q>; params: z.output<P> },
  ) => Promise<void> | void;
}

export const ProblemSchema = z
  .object({
    type: z.string().describe('A URI that identifies the problem type'),
    title: z.string().describe('The HTTP status phrase'),
    status: z.number().int(),
    detail: z.string().describe('What went wrong and what to do about it'),
    code: z.string().describe('A stable snake_case identifier to branch on'),
    errors: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .optional()
      .describe('Each invalid field, on validation_failed'),
    fields: z
      .array(z.string())
      .optional()
      .describe('The fields that differ from the stored resource, on deal_conflict'),
  })
  .meta({ title: 'Problem', description: 'RFC 9457 problem details' });

export interface ApiInfo {
  title: string;
  version: string;
  description: string;
  securitySchemes: Record<string, Record<string, unknown>>;
}

/**
 * A router that knows every method Node parses, so a path that exists answers 405 with `Allow` for TRACE, QUERY or
 * CONNECT as for PUT: Koa's router otherwise answers 501 to methods outside its short default list.
 */
export function createRouter(): Router {
  return new Router({ methods: METHODS });
}

/**
 * Unknown fields are refused, not ignored (a misspelt field would otherwise do nothing, silently): every object of a
 * request schema, nested ones included, becomes strict unless it says what extra keys it takes. The OpenAPI document
 * then says `additionalProperties: false`, from the same schema.
 */
export function strict<T extends z.ZodType>(schema: T): T {
  const def = (schema as z.ZodType)._zod.def as unknown as Record<string, unknown> & { type: string };
  const again = (changes: Record<string, unknown>) => {
    const copy = (schema as z.ZodType).clone({ ...def, ...changes } as never);
    // Descriptions and titles live in zod's registry under the original instance; the copy keeps them.
    const meta = z.globalRegistry.get(schema);
    if (meta) z.globalRegistry.add(copy, meta);
    return copy as unknown as T;
  };
  switch (def.type) {
    case 'object': {
      const shape = Object.fromEntries(
        Object.entries((schema as unknown as z.ZodObject).shape).map(([key, field]) => [
          key,
          strict(field as z.ZodType),
        ]),
      );
      return again({ shape, ...(def.catchall ? {} : { catchall: z.never() }) });
    }
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
      return again({ innerType: strict(def.innerType as z.ZodType) });
    case 'array':
      return again({ element: strict(def.element as z.ZodType) });
    case 'pipe':
      return again({ in: strict(def.in as z.ZodType) });
    case 'union':
      return again({ options: (def.options as z.ZodType[]).map((option) => strict(option)) });
    default:
      return schema;
  }
}

export class Api {
  readonly router = createRouter();
  private readonly routes: RouteDefinition<z.ZodType, z.ZodType, z.ZodType>[] = [];

  constructor(readonly info: ApiInfo) {}

  route<B extends z.ZodType = z.ZodUnknown, Q extends z.ZodType = z.ZodUnknown, P extends z.ZodType = z.ZodUnknown>(
    definition: RouteDefinition<B, Q, P>,
  ): void {
    definition = {
      ...definition,
      ...(definition.body ? { body: strict(definition.body) } : {}),
      // A route that declares no query takes none: `?foo=1` is refused like an unknown body field.
      query: strict(definition.query ?? (z.object({}) as unknown as Q)),
    };
    this.routes.push(definition);
    const koaPath = definition.path.replace(/\{(\w+)\}/g, ':$1');
    const { mapProblem } = definition;
    const bodyLimitBytes = definition.bodyLimitBytes ?? (definition.body ? SMALL_BODY_LIMIT_BYTES : undefined);
    const validate = async (ctx: Context) => {
      const params = parse(definition.params, ctx.params, 'path');
      const query = parse(definition.query, ctx.query, 'query');
      const body = definition.body
        ? parse(definition.body, await readJsonBody(ctx, bodyLimitBytes), 'body')
        : undefined;
      return { body, query, params };
    };
    const validateAndHandle: Middleware = async (ctx) => {
      if (bodyLimitBytes !== undefined) ctx.state.bodyLimitBytes = bodyLimitBytes;
      const input = mapProblem
        ? await validate(ctx).catch((error: unknown) => {
            throw error instanceof Problem ? mapProblem(error) : error;
          })
        : await validate(ctx);
      if (definition.idempotent)
        await definition.idempotent.run(ctx, input.body, () => definition.handler(ctx, input as never));
      else await definition.handler(ctx, input as never);
    };
    this.router.register(koaPath, [definition.method.toUpperCase()], [...(definition.use ?? []), validateAndHandle], {
      name: definition.operationId,
    });
  }

  openapi(serverUrl: string): Record<string, unknown> {
    const paths: Record<string, Record<string, unknown>> = {};
    for (const route of this.routes) {
      paths[route.path] ??= {};
      paths[route.path][route.method] = operation(route);
    }
    return {
      openapi: '3.1.0',
      info: { title: this.info.title, version: this.info.version, description: this.info.description },
      servers: [{ url: serverUrl }],
      paths,
      components: {
        securitySchemes: this.info.securitySchemes,
        schemas: { Problem: jsonSchema(ProblemSchema, 'output'), Json: JSON_VALUE },
        responses: {
          Problem: {
            description: 'An error, as RFC 9457 problem details',
            content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
          },
        },
      },
    };
  }
}

function parse<T extends z.ZodType>(schema: T | undefined, value: unknown, where: 'body' | 'query' | 'path') {
  if (!schema) return undefined;
  const result = schema.safeParse(value);
  if (!result.success) throw validationFailed(result.error, where);
  return result.data;
}

function operation(route: RouteDefinition<z.ZodType, z.ZodType, z.ZodType>): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const [status, spec] of Object.entries(route.responses)) {
    responses[status] = {
      description: spec.description,
      ...(spec.schema || spec.contentType
        ? {
            content: {
              [spec.contentType ?? 'application/json']: spec.schema
                ? { schema: jsonSchema(spec.schema, 'output') }
                : {},
              ...Object.fromEntries(
                Object.entries(spec.also ?? {}).map(([type, schema]) => [
                  type,
                  schema ? { schema: jsonSchema(schema, 'output') } : {},
                ]),
              ),
            },
          }
        : {}),
    };
  }
  for (const [status, spec] of Object.entries(route.responses)) {
    // A page's error can come from the boundary before the page runs (text rule, body limits): problem+json then.
    if (Number(status) >= 400 && spec.contentType === 'text/html' && !spec.schema) {
      (responses[status] as { content: Record<string, unknown> }).content['application/problem+json'] = {
        schema: { $ref: '#/components/schemas/Problem' },
      };
    }
  }
  responses.default = { $ref: '#/components/responses/Problem' };

  let requestBody: Record<string, unknown> | undefined;
  if (route.body) {
    // A body whose every field is optional may be left out (readJsonBody reads no body as {}).
    const required = !route.body.safeParse({}).success;
    const limit = route.bodyLimitBytes ?? SMALL_BODY_LIMIT_BYTES;
    // An example that stopped matching its schema fails the document's making (at start), not in a reader's hands.
    if (route.bodyExample !== undefined) route.body.parse(route.bodyExample);
    requestBody = {
      required,
      description: `JSON of at most ${sizeWords(limit)}, nested at most ${MAX_DEPTH} levels: 413 \`payload_too_large\` beyond the size, 400 \`validation_failed\` beyond the depth.`,
      content: {
        'application/json': {
          schema: jsonSchema(route.body, 'input'),
          ...(route.bodyExample !== undefined ? { example: route.bodyExample } : {}),
        },
      },
      'x-body-limit-bytes': limit,
      'x-max-depth': MAX_DEPTH,
    };
  } else if (route.rawBody) {
    const limit = route.bodyLimitBytes;
    requestBody = {
      required: route.rawBody.required ?? true,
      description:
        limit === undefined
          ? route.rawBody.description
          : `${route.rawBody.description}; at most ${sizeWords(limit)} (413 \`payload_too_large\` beyond).`,
      content: {
        [route.rawBody.contentType]: {
          schema: route.rawBody.schema
            ? jsonSchema(strict(route.rawBody.schema), 'input')
            : { type: 'string', format: 'binary' },
        },
      },
      ...(limit === undefined ? {} : { 'x-body-limit-bytes': limit }),
    };
  }

  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: route.tags,
    // 'anonymous' marks a credential as optional (OpenAPI's empty security requirement).
    ...(route.security ? { security: route.security.map((name) => (name === 'anonymous' ? {} : { [name]: [] })) } : {}),
    parameters: [
      ...parameters(route.params, 'path'),
      ...parameters(route.query, 'query'),
      ...(route.idempotent ? [IDEMPOTENCY_PARAMETER] : []),
    ],
    ...(requestBody ? { requestBody } : {}),
    responses,
  };
}

const IDEMPOTENCY_PARAMETER = {
  name: IDEMPOTENCY_HEADER,
  in: 'header',
  required: false,
  description:
    'A unique key of this request (1–255 printable ASCII characters; a UUID). The same key with the same body within ' +
    '24 hours answers the first attempt’s status and body with `Idempotent-Replayed: true`, also when that attempt ' +
    'answered 503 or timed out after the change was applied, and moves no money twice; the same key with another body ' +
    'or path: 409 `idempotency_key_reused`; while the first attempt runs: 409 `idempotency_key_in_use` (Retry-After). ' +
    'A request refused by validation (400 `validation_failed`) keeps nothing, so the key may be used again.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E](?:[\\x20-\\x7E]*[\\x21-\\x7E])?$' },
};

/** A byte count as the document says it: 64 KiB, 25 MiB, or bytes when it is neither. */
function sizeWords(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / 1024 / 1024} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

function parameters(schema: z.ZodType | undefined, location: 'path' | 'query'): Record<string, unknown>[] {
  if (!(schema instanceof z.ZodObject)) return [];
  return Object.entries(schema.shape as Record<string, z.ZodType>).map(([name, field]) => {
    const { description, ...fieldSchema } = jsonSchema(field, 'input');
    return {
      name,
      in: location,
      required: location === 'path' || !field.safeParse(undefined).success,
      ...(description ? { description } : {}),
      schema: fieldSchema,
    };
  });
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  if (io === 'input') documentTextRule(rest);
  return rest;
}

/** Free text as JSON Schema says it: no C0 control but tab, line feed and carriage return (the rule of text.ts). */
const TEXT_PATTERN = '^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F]*$';
/** The same, with at least one character that is not white space: what `.trim().min(1)` fields accept. */
const NON_BLANK_PATTERN =
  '^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F]*[^\\s\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F][^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F]*$';

/** Any JSON value whose text (strings and field names, at any depth) follows the rule: what a loose object takes. */
const JSON_VALUE = {
  description: 'Any JSON value; its strings and field names follow the text rule at any depth',
  anyOf: [
    { type: 'string', pattern: TEXT_PATTERN },
    { type: ['number', 'boolean', 'null'] },
    { type: 'array', items: { $ref: '#/components/schemas/Json' } },
    {
      type: 'object',
      propertyNames: { pattern: TEXT_PATTERN },
      additionalProperties: { $ref: '#/components/schemas/Json' },
    },
  ],
};

/**
 * The boundary refuses control characters in every string (text.ts), before any schema runs; each request string
 * schema says so with a pattern, so a client that follows the document is never refused. Enumerations, formats and
 * our own patterns admit no control character already. A `\S` pattern (NonBlank) becomes the non-blank text pattern.
 */
function documentTextRule(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(documentTextRule);
  if (node === null || typeof node !== 'object') return;
  const schema = node as Record<string, unknown>;
  const isString = schema.type === 'string' || (Array.isArray(schema.type) && schema.type.includes('string'));
  if (isString && schema.enum === undefined && schema.const === undefined && schema.format === undefined) {
    if (schema.pattern === undefined) schema.pattern = TEXT_PATTERN;
    else if (schema.pattern === '\\S') schema.pattern = NON_BLANK_PATTERN;
  }
  // Field names are text too: an object that takes keys beyond its properties says which, and what values.
  const isObject = schema.type === 'object' || schema.properties !== undefined;
  if (isObject && schema.additionalProperties !== false && schema.propertyNames === undefined) {
    schema.propertyNames = { pattern: TEXT_PATTERN };
    const extra = schema.additionalProperties;
    if (
      extra === undefined ||
      extra === true ||
      (typeof extra === 'object' && extra !== null && Object.keys(extra).length === 0)
    ) {
      schema.additionalProperties = { $ref: '#/components/schemas/Json' };
    }
  }
  for (const value of Object.values(schema)) if (typeof value === 'object') documentTextRule(value);
}
