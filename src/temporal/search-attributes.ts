// The custom search attributes of deal workflows, so administrators can filter in the Temporal Web UI
// (for example `DealStatus = "escrow_hold"`). One list for the dev server's flags and for clusters.
import type { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';

export const SEARCH_ATTRIBUTES = {
  DealStatus: 'Keyword',
  MarketplaceId: 'Keyword',
  ExternalId: 'Keyword',
  BuyerEmail: 'Keyword',
  DealAmount: 'Double',
} as const;

const INDEXED_TYPE = proto.temporal.api.enums.v1.IndexedValueType;

/** Registers the attributes a namespace lacks (a no-op on the dev server, which gets them as flags). */
export async function ensureSearchAttributes(
  connection: Pick<Connection, 'operatorService'>,
  namespace: string,
): Promise<string[]> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const known = new Set(Object.keys(existing.customAttributes ?? {}));
  const missing = Object.entries(SEARCH_ATTRIBUTES).filter(([name]) => !known.has(name));
  if (missing.length === 0) return [];
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(
      missing.map(([name, type]) => [
        name,
        type === 'Double' ? INDEXED_TYPE.INDEXED_VALUE_TYPE_DOUBLE : INDEXED_TYPE.INDEXED_VALUE_TYPE_KEYWORD,
      ]),
    ),
  });
  return missing.map(([name]) => name);
}
