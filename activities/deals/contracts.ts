// The widget's Continue needs a contract when a deal has none: a DOCX made from the deal and stored in the buyer's
// cloud under the document id the workflow chose, so a retry stores the same file again instead of a second one.
import type { Services } from '../../src/services.ts';
import { ensureUser, personalOrganization } from '../../src/accounts/users.ts';
import { findDeal } from '../../src/deals/store.ts';
import { contractDocx, contractFileName, DOCX_TYPE, type ContractLocale } from '../../src/widget/contract.ts';
import type { NewDocument } from '../../workflows/deals/deal-messages.ts';

export interface PrepareContractInput {
  dealId: string;
  documentId: string;
  marketplaceName: string;
  locale: ContractLocale;
  createdAt: string;
}

export function createContractActivities(services: Services) {
  return {
    async prepareContract(input: PrepareContractInput): Promise<NewDocument> {
      const deal = (await findDeal(services.db, { id: input.dealId }))!;
      const { user } = await ensureUser(services.db, { email: deal.buyer_email, name: deal.buyer_name });
      const organization = (await personalOrganization(services.db, user.id))!;
      const bytes = await contractDocx(deal, input.marketplaceName, input.locale, new Date(input.createdAt));
      const stored = await services.documents.put({
        organizationId: organization.id,
        documentId: input.documentId,
        bytes,
        contentType: DOCX_TYPE,
      });
      return {
        id: input.documentId,
        kind: 'contract',
        name: contractFileName(input.locale),
        content_type: DOCX_TYPE,
        size: stored.size,
        sha256: stored.sha256,
        created_at: input.createdAt,
        organization_id: organization.id,
        storage_key: stored.key,
      };
    },
  };
}
