// A connector reads one page of a remote source and maps it to tender records; `next` continues the same sync.
import type { TenderRecord } from '../ingest.ts';

export interface SourceConfig {
  key: string;
  kind: 'ocds' | 'eis' | 'ted';
  url: string;
  /** Assumed when a record names no country. */
  country: string | null;
}

export interface Page {
  records: TenderRecord[];
  /** Where the next page is (a URL or a token); none when this was the last. */
  next?: string;
}

export type Connector = (source: SourceConfig, cursor: string | undefined, fetcher?: typeof fetch) => Promise<Page>;

/** Fetch that fails on anything but 2xx, with a timeout, naming the URL (never its query: it may hold a token). */
export async function fetchOk(fetcher: typeof fetch, url: string, init: RequestInit = {}): Promise<Response> {
  const response = await fetcher(url, { ...init, signal: AbortSignal.timeout(30_000) });
  if (!response.ok) {
    const where = new URL(url);
    throw new Error(`${where.origin}${where.pathname} answered ${response.status}`);
  }
  return response;
}

export const UNKNOWN_COUNTRY = 'ZZ';
