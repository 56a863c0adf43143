// "A marketplace or the operator can require a second factor before escrow moves" (issue 25, decision 0025): a
// marketplace's own setting (PUT /api/mkt/settings/second-factor) and the operator's for every marketplace (the
// console's page, audited). When either holds, a buyer's or seller's money move in the cabinet (pay, release, refund)
// needs a session that gave a second factor (at sign-in, or by the step-up), else 403 second_factor_required; the
// pages ask for the factor and come back to the move. So does a seller's payout destination, which decides where money
// goes.
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import type { Db } from '../db.ts';
import type { Services } from '../services.ts';
import { problem } from '../http/problem.ts';
import { requireSecretKey, type Marketplace } from '../marketplaces/marketplaces.ts';
import { hadSecondFactor, type SignInFacts } from './factors.ts';

export interface MoneyFactorPolicy {
  /** The marketplace's own setting. */
  marketplace: boolean;
  /** The operator's, for every marketplace. */
  operator: boolean;
}

export async function moneyFactorPolicy(db: Db, marketplaceId: string): Promise<MoneyFactorPolicy> {
  const result = await db.query<{ marketplace: boolean | null; operator: boolean }>(
    `SELECT (SELECT require_second_factor FROM marketplaces WHERE id = $1) AS marketplace,
            (SELECT require_second_factor FROM operator_settings) AS operator`,
    [marketplaceId],
  );
  const row = result.rows[0];
  return { marketplace: row?.marketplace ?? false, operator: row?.operator ?? false };
}

export const moneyNeedsFactor = (policy: MoneyFactorPolicy) => policy.marketplace || policy.operator;

/** Whether this session may move this marketplace's money now: not required, or a second factor given. */
export async function mayMoveMoney(db: Db, marketplaceId: string, facts: SignInFacts | undefined): Promise<boolean> {
  if (facts && hadSecondFactor(facts)) return true;
  return !moneyNeedsFactor(await moneyFactorPolicy(db, marketplaceId));
}

/** 403 second_factor_required for a money move this session may not make yet (the JSON routes). */
export async function requireFactorForMoney(
  db: Db,
  marketplaceId: string,
  facts: SignInFacts | undefined,
): Promise<void> {
  if (!(await mayMoveMoney(db, marketplaceId, facts)))
    throw problem(
      'second_factor_required',
      'This marketplace requires a second factor before money moves: give it (POST /cabinet/mfa/verify, or sign in ' +
        'with it) and repeat the request.',
      { status: 403 },
    );
}

/**
 * A seller's payout destination decides where the money of every deal they sell in goes: changing it needs the factor
 * when the operator requires one, or any marketplace the person sells in does.
 */
export async function mayChangePayouts(
  db: Db,
  seller: { email: string },
  facts: SignInFacts | undefined,
): Promise<boolean> {
  if (facts && hadSecondFactor(facts)) return true;
  // By the seller's address, as the deals name their people (deals_seller_email_idx).
  const result = await db.query<{ required: boolean }>(
    `SELECT (SELECT require_second_factor FROM operator_settings)
            OR EXISTS (SELECT 1 FROM deals d JOIN marketplaces m ON m.id = d.marketplace_id
                        WHERE lower(d.seller_email) = lower($1) AND m.require_second_factor) AS required`,
    [seller.email],
  );
  return !result.rows[0]?.required;
}

export async function setOperatorRequirement(db: Db, required: boolean): Promise<{ before: boolean }> {
  const result = await db.query<{ before: boolean }>(
    `WITH old AS (SELECT require_second_factor AS before FROM operator_settings FOR UPDATE)
     UPDATE operator_settings SET require_second_factor = $1 RETURNING (SELECT before FROM old)`,
    [required],
  );
  return { before: result.rows[0]?.before ?? false };
}

const Setting = z.object({
  required: z.boolean().describe('This marketplace requires a second factor before money moves in the cabinet'),
  operator_required: z
    .boolean()
    .describe('The operator requires it for every marketplace (then it is required whatever `required` says)'),
});

export function moneyFactorRoutes(api: Api, services: Services): void {
  const { db } = services;
  const marketplaceKey = {
    tags: ['Marketplace'],
    security: ['marketplaceKey'],
    use: [requireSecretKey(db)],
  };
  const answer = async (marketplaceId: string) => {
    const policy = await moneyFactorPolicy(db, marketplaceId);
    return { required: policy.marketplace, operator_required: policy.operator };
  };

  api.route({
    ...marketplaceKey,
    method: 'get',
    path: '/api/mkt/settings/second-factor',
    operationId: 'getSecondFactorSetting',
    summary: 'Whether buyers and sellers need a second factor before money moves',
    responses: { 200: { description: 'The setting', schema: Setting } },
    handler: async (ctx) => {
      ctx.body = await answer((ctx.state.marketplace as Marketplace).id);
    },
  });

  api.route({
    ...marketplaceKey,
    method: 'put',
    path: '/api/mkt/settings/second-factor',
    operationId: 'setSecondFactorSetting',
    summary: 'Require (or stop requiring) a second factor before money moves in this marketplace’s deals',
    description:
      'When required, a buyer’s Pay, Release or Refund in the cabinet needs a session that signed in with a second ' +
      'factor (an authenticator app or a passkey) or gave it since; the cabinet asks for it and the JSON routes answer ' +
      '403 second_factor_required. Applies from the next move on.',
    body: z.object({ required: z.boolean() }),
    responses: { 200: { description: 'The setting', schema: Setting } },
    handler: async (ctx, { body }) => {
      const marketplace = ctx.state.marketplace as Marketplace;
      await db.query('UPDATE marketplaces SET require_second_factor = $2 WHERE id = $1', [
        marketplace.id,
        body.required,
      ]);
      ctx.body = await answer(marketplace.id);
    },
  });
}
