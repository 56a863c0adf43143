// Routes declared once with zod schemas: the same declaration validates requests and writes the OpenAPI 3.1 document,
// so the document cannot drift from the code.
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { z } from 'zod';
import { readJsonBody } from './body.ts';
import { validationFailed } from './problem.ts';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  /** Defaults to application/json when a schema is given. */
  contentType?: string;
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
  /** Security scheme names, for the document; enforcement is the `use` middleware. */
  security?: string[];
  /** Runs before validation, e.g. authentication, so a bad credential is 401 before a bad body is 400. */
  use?: Middleware[];
  /** A JSON body, validated. */
  body?: B;
  /** A body the handler reads itself (file uploads); documented only. */
  rawBody?: { contentType: string; description: string };
  query?: Q;
  params?: P;
  responses: Record<number, ResponseSpec>;
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
  })
  .meta({ title: 'Problem', description: 'RFC 9457 problem details' });

export interface ApiInfo {
  title: string;
  version: string;
  description: string;
  securitySchemes: Record<string, Record<string, unknown>>;
}

export class Api {
  readonly router = new Router();
  private readonly routes: RouteDefinition<z.ZodType, z.ZodType, z.ZodType>[] = [];

  constructor(readonly info: ApiInfo) {}

  route<B extends z.ZodType = z.ZodUnknown, Q extends z.ZodType = z.ZodUnknown, P extends z.ZodType = z.ZodUnknown>(
    definition: RouteDefinition<B, Q, P>,
  ): void {
    this.routes.push(definition as unknown as RouteDefinition<z.ZodType, z.ZodType, z.ZodType>);
    const koaPath = definition.path.replace(/\{(\w+)\}/g, ':$1');
    const validateAndHandle: Middleware = async (ctx) => {
      const params = parse(definition.params, ctx.params, 'path');
      const query = parse(definition.query, ctx.query, 'query');
      const body = definition.body ? parse(definition.body, await readJsonBody(ctx), 'body') : undefined;
      await definition.handler(ctx, { body, query, params } as never);
    };
    this.router.register(koaPath, [definition.method.toUpperCase()], [...(definition.use ?? []), validateAndHandle], {
      name: definition.operationId,
    });
  }

  openapi(serverUrl: string): Record<string, unknown> {
    const paths: Record<string, Record<string, unknown>> = {};
    for (const route of this.routes) {
      paths[route.path] ??= {};
      paths[route.path]![route.method] = operation(route);
    }
    return {
      openapi: '3.1.0',
      info: { title: this.info.title, version: this.info.version, description: this.info.description },
      servers: [{ url: serverUrl }],
      paths,
      components: {
        securitySchemes: this.info.securitySchemes,
        schemas: { Problem: jsonSchema(ProblemSchema, 'output') },
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
              [spec.contentType ?? 'application/json']: spec.schema ? { schema: jsonSchema(spec.schema, 'output') } : {},
            },
          }
        : {}),
    };
  }
  responses.default = { $ref: '#/components/responses/Problem' };

  let requestBody: Record<string, unknown> | undefined;
  if (route.body) {
    requestBody = { required: true, content: { 'application/json': { schema: jsonSchema(route.body, 'input') } } };
  } else if (route.rawBody) {
    requestBody = {
      required: true,
      description: route.rawBody.description,
      content: { [route.rawBody.contentType]: { schema: { type: 'string', format: 'binary' } } },
    };
  }

  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: route.tags,
    ...(route.security ? { security: route.security.map((name) => ({ [name]: [] })) } : {}),
    parameters: [...parameters(route.params, 'path'), ...parameters(route.query, 'query')],
    ...(requestBody ? { requestBody } : {}),
    responses,
  };
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
  return rest;
}
