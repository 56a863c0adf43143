// TED (Tenders Electronic Daily) through its v3 search API: POST {query, fields, limit, paginationMode: ITERATION}
// answers {notices, totalNoticeCount, iterationNextToken}; each notice carries the requested eForms fields, text
// fields as {language: text}, country codes in ISO alpha-3, dates as YYYY-MM-DD+hh:mm.
import { toAlpha2 } from '../countries.ts';
import type { TenderRecord } from '../ingest.ts';
import { fetchOk, UNKNOWN_COUNTRY, type Connector } from './types.ts';

type Json = Record<string, any>;

export const TED_FIELDS = [
  'publication-number',
  'notice-title',
  'description-proc',
  'buyer-name',
  'buyer-country',
  'classification-cpv',
  'publication-date',
  'deadline-receipt-tender-date-lot',
  'estimated-value-proc',
  'estimated-value-cur-proc',
  'procedure-type',
  'links',
];
export const TED_DEFAULT_QUERY = 'publication-date >= today(-7)';
const PAGE_SIZE = 100;

export const tedConnector: Connector = async (source, cursor, fetcher = fetch) => {
  const url = new URL(source.url);
  const query = url.searchParams.get('query') ?? TED_DEFAULT_QUERY;
  url.searchParams.delete('query');
  const response = await fetchOk(fetcher, url.toString(), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify({
      query,
      fields: TED_FIELDS,
      limit: PAGE_SIZE,
      paginationMode: 'ITERATION',
      ...(cursor ? { iterationNextToken: cursor } : {}),
    }),
  });
  const body = (await response.json()) as Json;
  const notices: Json[] = Array.isArray(body.notices) ? body.notices : [];
  return {
    records: notices.map(toRecord).filter((r): r is TenderRecord => r !== undefined),
    next: notices.length > 0 && typeof body.iterationNextToken === 'string' ? body.iterationNextToken : undefined,
  };
};

function toRecord(notice: Json): TenderRecord | undefined {
  const number = notice['publication-number'];
  if (typeof number !== 'string') return undefined;
  const amount = Number(notice['estimated-value-proc']);
  return {
    sourceId: number,
    country: toAlpha2(list(notice['buyer-country'])[0]) ?? UNKNOWN_COUNTRY,
    title: text(notice['notice-title']) ?? number,
    description: text(notice['description-proc']) ?? '',
    buyerName: text(notice['buyer-name']) ?? '',
    buyerId: null,
    valueAmount: Number.isFinite(amount) && notice['estimated-value-proc'] !== undefined ? amount : null,
    valueCurrency: list(notice['estimated-value-cur-proc'])[0] ?? null,
    status: 'active',
    procurementMethod: list(notice['procedure-type'])[0] ?? null,
    publishedAt: tedDate(list(notice['publication-date'])[0]),
    deadlineAt: list(notice['deadline-receipt-tender-date-lot']).map(tedDate).filter(Boolean).sort()[0] ?? null,
    url: htmlLink(notice.links) ?? `https://ted.europa.eu/en/notice/-/detail/${number}`,
    classification: [...new Set(list(notice['classification-cpv']))].map((id) => ({
      scheme: 'CPV',
      id,
      description: '',
    })),
    raw: notice,
  };
}

function list(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  return (Array.isArray(value) ? value : [value]).map(String);
}

/** A multilingual field ({eng: "…"} or {eng: ["…"]}): English first, else any language. */
function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(String).join(' ');
  if (value && typeof value === 'object') {
    const byLanguage = value as Record<string, unknown>;
    const chosen = byLanguage.eng ?? byLanguage.ENG ?? Object.values(byLanguage)[0];
    return chosen === undefined ? undefined : text(chosen);
  }
  return undefined;
}

/** `2024-01-05+01:00` (a date with its offset) or a full timestamp, as ISO. */
export function tedDate(value: string | undefined): string | null {
  if (!value) return null;
  const dateWithOffset = /^(\d{4}-\d{2}-\d{2})(Z|[+-]\d{2}:\d{2})?$/.exec(value);
  const time = Date.parse(dateWithOffset ? `${dateWithOffset[1]}T00:00:00${dateWithOffset[2] ?? 'Z'}` : value);
  return Number.isNaN(time) ? null : new Date(time).toISOString();
}

function htmlLink(links: Json | undefined): string | undefined {
  const html = links?.html;
  if (!html || typeof html !== 'object') return undefined;
  return html.ENG ?? html.eng ?? (Object.values(html)[0] as string | undefined);
}
