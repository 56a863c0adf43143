// EIS (zakupki.gov.ru) 44-FZ notices in the XML of its open-data export: `export` documents holding notices such as
// epNotificationEF2020 (current) or fcsNotificationEF (before 2022). Namespace prefixes are dropped and fields are
// found by their element names, which both generations share: purchaseNumber (the registry number),
// purchaseObjectInfo (the object), maxPrice and currency code (initial maximum price), the customer's INN,
// OKPD2 codes, and endDT / endDate (application deadline). The export publishes ZIP archives of such XML files (one
// notice each); the URL may name an archive or a single XML document.
import { unzipSync } from 'fflate';
import { XMLParser } from 'fast-xml-parser';
import type { TenderRecord } from '../ingest.ts';
import { fetchOk, type Connector } from './types.ts';

type Node = Record<string, unknown>;

const parser = new XMLParser({ removeNSPrefix: true, ignoreAttributes: true, parseTagValue: false, trimValues: true });

export const eisConnector: Connector = async (source, cursor, fetcher = fetch) => {
  const body = new Uint8Array(await (await fetchOk(fetcher, cursor ?? source.url)).arrayBuffer());
  return { records: xmlDocuments(body).flatMap(recordsFromEisXml) };
};

/** The XML documents of a response: every .xml entry of a ZIP archive (it starts with "PK"), or the body itself. */
function xmlDocuments(body: Uint8Array): string[] {
  const decoder = new TextDecoder();
  if (body[0] !== 0x50 || body[1] !== 0x4b) return [decoder.decode(body)];
  const entries = unzipSync(body, { filter: (entry) => entry.name.toLowerCase().endsWith('.xml') });
  return Object.keys(entries)
    .sort()
    .map((name) => decoder.decode(entries[name]));
}

export function recordsFromEisXml(xml: string): TenderRecord[] {
  const document = parser.parse(xml) as Node;
  const root = (document.export ?? document) as Node;
  const notices: Node[] = [];
  for (const [name, value] of Object.entries(root)) {
    if (!/notification/i.test(name)) continue;
    for (const notice of Array.isArray(value) ? value : [value]) notices.push({ ...(notice as Node), _type: name });
  }
  return notices.map(toRecord).filter((record): record is TenderRecord => record !== undefined);
}

function toRecord(notice: Node): TenderRecord | undefined {
  const number = first(notice, 'purchaseNumber');
  if (!number) return undefined;
  const object = first(notice, 'purchaseObjectInfo') ?? '';
  const customer =
    firstNode(notice, 'responsibleOrgInfo') ??
    firstNode(notice, 'responsibleOrg') ??
    firstNode(notice, 'customer') ??
    {};
  const price = first(notice, 'maxPrice');
  const currency = firstNode(notice, 'currency');
  const placingWay = firstNode(notice, 'placingWay');
  const objectNames = all(notice, 'purchaseObject')
    .map((o) => first(o as Node, 'name'))
    .filter(Boolean);
  return {
    sourceId: number,
    country: 'RU',
    title: object,
    description: [object, ...new Set(objectNames)].filter(Boolean).join('. '),
    buyerName: first(customer, 'fullName') ?? '',
    buyerId: first(customer, 'INN') ?? first(notice, 'INN') ?? null,
    valueAmount: price ? Number(price) : null,
    valueCurrency: (currency && first(currency, 'code')) ?? 'RUB',
    status: 'active',
    law: '44-fz',
    procurementMethod: (placingWay && first(placingWay, 'name')) ?? null,
    publishedAt: iso(
      first(notice, 'publishDTInEIS') ?? first(notice, 'docPublishDate') ?? first(notice, 'publishDate'),
    ),
    deadlineAt: iso(first(notice, 'endDT') ?? first(notice, 'endDate')),
    url:
      first(notice, 'href') ?? `https://zakupki.gov.ru/epz/order/notice/ea20/view/common-info.html?regNumber=${number}`,
    classification: okpd2Codes(notice),
    raw: notice,
  };
}

function okpd2Codes(notice: Node): TenderRecord['classification'] {
  const codes = new Map<string, string>();
  for (const node of all(notice, 'OKPD2') as Node[]) {
    const code = first(node, 'OKPDCode') ?? first(node, 'code');
    if (code) codes.set(code, first(node, 'OKPDName') ?? first(node, 'name') ?? '');
  }
  return [...codes].map(([id, description]) => ({ scheme: 'OKPD2', id, description }));
}

function iso(value: string | undefined): string | null {
  if (!value) return null;
  const time = Date.parse(value);
  return Number.isNaN(time) ? null : new Date(time).toISOString();
}

/** Every descendant value under this element name, depth first. */
function all(node: unknown, name: string, out: unknown[] = []): unknown[] {
  if (Array.isArray(node)) {
    for (const item of node) all(item, name, out);
  } else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === name) out.push(...(Array.isArray(value) ? value : [value]));
      else all(value, name, out);
    }
  }
  return out;
}

function first(node: Node, name: string): string | undefined {
  const value = all(node, name).find((v) => typeof v === 'string' || typeof v === 'number');
  return value === undefined ? undefined : String(value);
}

function firstNode(node: Node, name: string): Node | undefined {
  return all(node, name).find((v) => v !== null && typeof v === 'object') as Node | undefined;
}
