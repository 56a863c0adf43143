// Typed keys of the deal search attributes (registered by src/temporal/search-attributes.ts), for the workflow and
// the client alike.
import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';
import type { DealRecord, DealStatus } from './model.ts';

export const DealStatusKey = defineSearchAttributeKey('DealStatus', SearchAttributeType.KEYWORD);
export const MarketplaceIdKey = defineSearchAttributeKey('MarketplaceId', SearchAttributeType.KEYWORD);
export const ExternalIdKey = defineSearchAttributeKey('ExternalId', SearchAttributeType.KEYWORD);
export const BuyerEmailKey = defineSearchAttributeKey('BuyerEmail', SearchAttributeType.KEYWORD);
export const DealAmountKey = defineSearchAttributeKey('DealAmount', SearchAttributeType.DOUBLE);

export function dealSearchAttributes(deal: DealRecord, status: DealStatus): SearchAttributePair[] {
  return [
    { key: DealStatusKey, value: status },
    { key: MarketplaceIdKey, value: deal.marketplace_id },
    { key: ExternalIdKey, value: deal.external_id },
    { key: BuyerEmailKey, value: deal.buyer_email.toLowerCase() },
    { key: DealAmountKey, value: deal.amount },
  ];
}
