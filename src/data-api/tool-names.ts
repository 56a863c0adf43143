// The MCP tools of the data server (docs/architecture.md#data-api-and-mcp); /v1/me lists them as what a key may call.
export const TOOL_NAMES = [
  'search_tenders',
  'get_tender',
  'tender_facets',
  'tender_countries',
  'list_sources',
  'search_practice',
  'search_knowledge',
  'list_corpora',
] as const;
