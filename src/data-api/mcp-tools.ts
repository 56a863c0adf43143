// The eight MCP tools: the same service functions and schemas as the REST routes, read-only, over our own data only.
import { McpServer, type CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Db } from '../db.ts';
import type { Logger } from '../log.ts';
import { Problem, problem } from '../http/problem.ts';
import {
  CorporaSchema,
  CountriesSchema,
  FacetsSchema,
  KnowledgeResultsSchema,
  KnowledgeSearchInput,
  PracticeResultsSchema,
  PracticeSearchInput,
  SearchTendersToolInput,
  SourcesSchema,
  tenderSearch,
  TenderCardSchema,
  TenderFacetsToolInput,
  TenderIdInput,
  TenderListSchema,
} from './schemas.ts';
import { searchTenders, tenderCard, tenderCountries, tenderFacets, type SearchBounds } from './tenders.ts';
import { listSources } from './sources.ts';
import { listCorpora, searchKnowledge, searchPractice } from './practice.ts';
import { costsNothing, type ReservedUnit } from './quota.ts';
import type { TOOL_NAMES } from './tool-names.ts';

const ANNOTATIONS = { readOnlyHint: true, openWorldHint: false, destructiveHint: false, idempotentHint: true } as const;

const NoInput = z.object({});

/** What one HTTP request to the MCP endpoint gives its tools. */
export interface ToolCallScope {
  /** The quota unit a tools/call reserved; absent on any other request (no tool runs there). */
  unit?: ReservedUnit;
  /** The request's X-Request-Id, which a caller quotes to support. */
  requestId: string;
  log: Logger;
}

/** A result as MCP wants it: structured content plus the same JSON as text. */
function result(data: unknown): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(data) }],
    structuredContent: data,
  };
}

const failure = (text: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text }] });

/**
 * Runs a tool the protocol layer accepted (it exists, its arguments fit the schema) and spends the request's unit.
 * Failures become isError results: a Problem keeps its text (an unknown tender, a search past its time budget; written
 * for the caller); anything else is ours and is answered with a generic text and the request id, the details going
 * to the log only. Refused by validation or failed on our side, the call costs nothing.
 */
async function run(scope: ToolCallScope, tool: string, work: () => Promise<unknown>): Promise<CallToolResult> {
  if (!scope.unit?.spend())
    return failure('request_aborted: the request ended before the tool ran; nothing was counted.');
  try {
    return result(await work());
  } catch (error) {
    if (error instanceof Problem) {
      if (costsNothing(error.status, error.code)) await scope.unit.giveBack();
      return failure(`${error.code}: ${error.message}`);
    }
    scope.log.error({ err: error, tool }, 'MCP tool failed');
    await scope.unit.giveBack();
    return failure(
      `internal_error: Something went wrong on our side; the call was not counted. Retry later; if it persists, ` +
        `contact support with the request id ${scope.requestId}.`,
    );
  }
}

export function createMcpServer(db: Db, bounds: SearchBounds, scope: ToolCallScope): McpServer {
  const server = new McpServer(
    { name: 'svc-data', title: 'svc tender data', version: '1.0.0' },
    {
      instructions:
        'Read-only public procurement data: tenders from Russia (44-FZ) and worldwide (TED, OCDS publishers), ' +
        'supervisory court practice and knowledge corpora. Searches accept Russian and English.',
    },
  );
  // Input schemas are strict (additionalProperties: false): a misspelt argument is refused, never silently ignored.
  const tool = <I extends z.ZodObject, O extends z.ZodType>(
    name: (typeof TOOL_NAMES)[number],
    title: string,
    description: string,
    inputSchema: I,
    outputSchema: O,
    handler: (args: z.output<I>) => Promise<z.output<O>>,
  ) => {
    server.registerTool(
      name,
      { title, description, inputSchema: inputSchema.strict(), outputSchema, annotations: { title, ...ANNOTATIONS } },
      ((args: z.output<I>) => run(scope, name, () => handler(args))) as never,
    );
  };

  tool(
    'search_tenders',
    'Search tenders',
    'Tenders that match what you mean, best first with a relevance score 0..1 (0.9 and more: every part of the query in ' +
      'the title). A good query names the goods, works or services and maybe a place, in Russian or English: ' +
      '«лекарственные препараты», "road repair Leeds", diesel fuel; synonyms and translations match, so one language ' +
      'is enough. Put the rest in filters: status (active = open), deadline_from/deadline_to, published_from/published_to ' +
      '(ISO dates), value_min/value_max with currency, classification (CPV or OKPD2 code prefixes: "cpv:336", ' +
      '"okpd2:21.20"), buyer (name words or id), country, source, law (44-fz, 223-fz, eu-2014-24, …). sort: relevance, ' +
      'newest, deadline, value_asc, value_desc. Without query: the newest tenders the filters let through. For the next ' +
      'page pass next_cursor as cursor. Same as GET /v1/tenders.',
    SearchTendersToolInput,
    TenderListSchema,
    ({ query, ...args }) => searchTenders(db, tenderSearch({ ...args, q: query }, 'query'), bounds),
  );
  tool(
    'get_tender',
    'Get a tender card',
    'The full card of one tender by id (from search_tenders), with the source record. Same as GET /v1/tenders/{id}.',
    TenderIdInput,
    TenderCardSchema,
    async ({ id }) => {
      const card = await tenderCard(db, id);
      if (!card) throw problem('not_found', `No tender ${id}. Take ids from search_tenders results.`);
      return card;
    },
  );
  tool(
    'tender_facets',
    'Tender facets',
    'Tender counts by country, source, status, law, currency and frequent classification codes (CPV, OKPD2), within ' +
      'the query and filters given (the same as search_tenders takes): what to filter by next. Same as GET /v1/tenders/facets.',
    TenderFacetsToolInput,
    FacetsSchema,
    ({ query, ...args }) => tenderFacets(db, { ...args, q: query }),
  );
  tool(
    'tender_countries',
    'Countries with tenders',
    'Countries that have tenders, with names in English and Russian and counts. Same as GET /v1/tenders/countries.',
    NoInput,
    CountriesSchema,
    () => tenderCountries(db),
  );
  tool(
    'list_sources',
    'Tender sources',
    'Where tenders come from, with each source’s status (ok, degraded, failing, disabled), last sync and record count. Same as GET /v1/sources.',
    NoInput,
    SourcesSchema,
    () => listSources(db),
  );
  tool(
    'search_practice',
    'Search supervisory practice',
    'Court and FAS decisions on public procurement matching the query, with case number, court, date and a snippet. Same as POST /v1/practice/search.',
    PracticeSearchInput,
    PracticeResultsSchema,
    (args) => searchPractice(db, args),
  );
  tool(
    'search_knowledge',
    'Search knowledge corpora',
    'Reference documents matching the query, optionally only in some corpora (see list_corpora). Same as POST /v1/knowledge/search.',
    KnowledgeSearchInput,
    KnowledgeResultsSchema,
    (args) => searchKnowledge(db, args),
  );
  tool(
    'list_corpora',
    'Knowledge corpora',
    'The knowledge corpora search_knowledge can search, with their document counts. Same as GET /v1/corpora.',
    NoInput,
    CorporaSchema,
    () => listCorpora(db),
  );
  return server;
}
