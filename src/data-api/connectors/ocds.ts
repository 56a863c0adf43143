// OCDS release packages and record packages (OCDS 1.1): the general import any publisher can feed. Releases of one
// contracting process are compiled (later releases override earlier fields; arrays are replaced, as OCDS merging
// does for arrays without ids) and the compiled tender becomes one record. Pages follow `links.next`.
import { toAlpha2 } from '../countries.ts';
import type { TenderRecord } from '../ingest.ts';
import { fetchOk, UNKNOWN_COUNTRY, type Connector, type SourceConfig } from './types.ts';

type Json = Record<string, any>;

export const ocdsConnector: Connector = async (source, cursor, fetcher = fetch) => {
  const body = (await (await fetchOk(fetcher, cursor ?? source.url)).json()) as Json;
  return {
    records: recordsFromPackage(body, source),
    next: typeof body.links?.next === 'string' ? body.links.next : undefined,
  };
};

export function recordsFromPackage(body: Json, source: Pick<SourceConfig, 'country'>): TenderRecord[] {
  if (Array.isArray(body.records)) {
    return body.records
      .map((record: Json) => record.compiledRelease ?? compile(record.releases ?? []))
      .filter(hasTender)
      .map((release: Json) => toRecord(release, source));
  }
  if (Array.isArray(body.releases)) {
    const byOcid = new Map<string, Json[]>();
    for (const release of body.releases as Json[]) {
      if (typeof release.ocid !== 'string') continue;
      byOcid.set(release.ocid, [...(byOcid.get(release.ocid) ?? []), release]);
    }
    return [...byOcid.values()]
      .map(compile)
      .filter(hasTender)
      .map((release) => toRecord(release, source));
  }
  throw new Error('Not an OCDS release or record package: it has neither releases nor records.');
}

function hasTender(release: Json): boolean {
  return typeof release?.tender?.title === 'string' || typeof release?.tender?.description === 'string';
}

/** Merges releases in date order: objects merge field by field, everything else is replaced. */
export function compile(releases: Json[]): Json {
  const sorted = [...releases].sort((a, b) => String(a.date ?? '').localeCompare(String(b.date ?? '')));
  return sorted.reduce<Json>((compiled, release) => merge(compiled, release), {});
}

function merge(target: Json, patch: Json): Json {
  const out: Json = { ...target };
  for (const [key, value] of Object.entries(patch)) {
    out[key] =
      value &&
      typeof value === 'object' &&
      !Array.isArray(value) &&
      typeof out[key] === 'object' &&
      !Array.isArray(out[key])
        ? merge(out[key] ?? {}, value)
        : value;
  }
  return out;
}

function toRecord(release: Json, source: Pick<SourceConfig, 'country'>): TenderRecord {
  const tender: Json = release.tender ?? {};
  const buyerRef: Json = release.buyer ?? tender.procuringEntity ?? {};
  const parties: Json[] = Array.isArray(release.parties) ? release.parties : [];
  const buyerParty = parties.find((p) => p.id === buyerRef.id) ?? parties.find((p) => p.roles?.includes('buyer'));
  const country =
    toAlpha2(buyerParty?.address?.countryName) ??
    toAlpha2(buyerParty?.address?.country) ??
    source.country ??
    UNKNOWN_COUNTRY;
  const period: Json = tender.tenderPeriod ?? {};
  return {
    sourceId: release.ocid,
    ocid: release.ocid,
    country,
    title: tender.title ?? tender.description ?? release.ocid,
    description: tender.description ?? '',
    buyerName: buyerRef.name ?? buyerParty?.name ?? '',
    buyerId: buyerRef.id ?? buyerParty?.id ?? null,
    valueAmount: typeof tender.value?.amount === 'number' ? tender.value.amount : null,
    valueCurrency: tender.value?.currency ?? null,
    status: tender.status ?? 'active',
    procurementMethod: tender.procurementMethod ?? null,
    publishedAt: period.startDate ?? release.date ?? null,
    deadlineAt: period.endDate ?? endFromDuration(period),
    url: firstUrl(tender.documents),
    classification: classifications(tender.items),
    raw: release,
  };
}

function endFromDuration(period: Json): string | null {
  if (!period.startDate || typeof period.durationInDays !== 'number') return null;
  return new Date(Date.parse(period.startDate) + period.durationInDays * 86_400_000).toISOString();
}

function firstUrl(documents: unknown): string | null {
  if (!Array.isArray(documents)) return null;
  return documents.find((d: Json) => typeof d.url === 'string' && /^https?:/.test(d.url))?.url ?? null;
}

function classifications(items: unknown): TenderRecord['classification'] {
  if (!Array.isArray(items)) return [];
  const seen = new Map<string, { scheme: string; id: string; description: string }>();
  for (const item of items as Json[]) {
    for (const c of [item.classification, ...(item.additionalClassifications ?? [])]) {
      if (!c?.scheme || !c?.id) continue;
      seen.set(`${c.scheme}:${c.id}`, {
        scheme: String(c.scheme),
        id: String(c.id),
        description: String(c.description ?? ''),
      });
    }
  }
  return [...seen.values()];
}
