// Data accounts for administrators: POST /admin/data-keys issues a key to an account (made on first use) with a tariff;
// the accounts are listed and searched with this month's usage and their keys, their tariff and quota changed, keys
// issued and revoked. The key logic is keys.ts's, the same the cabinet uses.
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { requireAdmin } from '../admin/auth.ts';
import { EmailSchema } from '../accounts/users.ts';
import { notFound } from '../http/problem.ts';
import { queryInt } from '../http/query-values.ts';
import { DATA_KEY_NAME_MAX, issueAccountKey, issueDataKey, revokeAnyDataKey, TARIFFS } from './keys.ts';
import { findDataAccount, listDataAccounts, updateDataAccount } from './quota.ts';

const DataKey = z.object({
  id: z.uuid(),
  name: z.string(),
  prefix: z
    .string()
    .nullable()
    .describe('svc_mcp_ and the next 4 characters; null for keys issued before prefixes were kept'),
  created_at: z.iso.datetime(),
  revoked_at: z.iso.datetime().nullable(),
});
const DataAccount = z.object({
  id: z.uuid().describe('The owner’s svc ID'),
  email: z.string(),
  tariff: z.enum(TARIFFS),
  monthly_quota: z
    .number()
    .int()
    .nullable()
    .describe('The quota in force: the account’s own, else the tariff’s; null is unlimited'),
  custom_quota: z.boolean().describe('The account has its own quota instead of the tariff’s'),
  used: z.number().int().describe('Requests counted this calendar month (UTC)'),
  keys: z.array(DataKey).describe('Active keys first, newest first'),
});
const IdParams = z.object({ id: z.uuid() });
/** A quota an account can be given: a whole number of requests a month, up to 10^12 (beyond that, choose unlimited). */
export const MAX_QUOTA = 1_000_000_000_000;

export function dataKeyAdminRoutes(api: Api, services: Services): void {
  const { db } = services;
  const admin = {
    tags: ['Administration'],
    security: ['adminToken'],
    use: [requireAdmin(db, services.config.SVC_BOOTSTRAP_ADMIN_TOKEN)],
  };
  const accountNotFound = () => notFound('No such data account.');

  api.route({
    ...admin,
    method: 'get',
    path: '/admin/data-accounts',
    operationId: 'listDataAccounts',
    summary: 'Data accounts, newest first, with this month’s usage and their keys',
    description:
      '`q` finds accounts whose owner’s e-mail contains it (any case). Pass the last item’s id as `starting_after` for the next page.',
    query: z.object({
      q: z.string().min(1).max(320).optional().describe('Part of the owner’s e-mail'),
      limit: queryInt(1, 100).default(20).describe('Accounts per page'),
      starting_after: z.uuid().optional().describe('An account id: the page continues after it'),
    }),
    responses: {
      200: { description: 'The accounts', schema: z.object({ items: z.array(DataAccount), has_more: z.boolean() }) },
    },
    handler: async (ctx, { query }) => {
      ctx.body = await listDataAccounts(db, query);
    },
  });

  api.route({
    ...admin,
    method: 'get',
    path: '/admin/data-accounts/{id}',
    operationId: 'dataAccount',
    summary: 'A data account with this month’s usage and its keys',
    params: IdParams,
    responses: { 200: { description: 'The account', schema: DataAccount } },
    handler: async (ctx, { params }) => {
      const account = await findDataAccount(db, params.id);
      if (!account) throw accountNotFound();
      ctx.body = account;
    },
  });

  api.route({
    ...admin,
    method: 'patch',
    path: '/admin/data-accounts/{id}',
    operationId: 'updateDataAccount',
    summary: 'Change an account’s tariff or quota',
    description:
      '`monthly_quota` sets the account’s own monthly quota; null gives it the tariff’s again. Both hold from the next data request on.',
    params: IdParams,
    body: z.object({
      tariff: z.enum(TARIFFS).optional(),
      monthly_quota: z
        .number()
        .int()
        .min(0)
        .max(MAX_QUOTA)
        .nullable()
        .optional()
        .describe('Requests a month; null: the tariff’s'),
    }),
    responses: { 200: { description: 'The account after the change', schema: DataAccount } },
    handler: async (ctx, { params, body }) => {
      const changed = await updateDataAccount(db, params.id, body);
      if (!changed) throw accountNotFound();
      ctx.state.auditBefore = changed.before;
      ctx.body = changed.after;
    },
  });

  api.route({
    ...admin,
    method: 'post',
    path: '/admin/data-accounts/{id}/keys',
    operationId: 'issueDataAccountKey',
    summary: 'Issue a key to a data account',
    description:
      'The key is shown only in this answer. 409 `too_many_data_keys` when the account holds 20 active keys.',
    params: IdParams,
    body: z.object({ name: z.string().trim().max(DATA_KEY_NAME_MAX).default('').describe('What the key is for') }),
    responses: { 201: { description: 'The key, shown only now', schema: z.object({ id: z.uuid(), key: z.string() }) } },
    handler: async (ctx, { params, body }) => {
      const issued = await issueAccountKey(db, params.id, body.name);
      ctx.status = 201;
      ctx.body = { id: issued.id, key: issued.key };
    },
  });

  api.route({
    ...admin,
    method: 'post',
    path: '/admin/data-keys/{id}/revoke',
    operationId: 'revokeDataKey',
    summary: 'Revoke a data API key',
    description:
      'Refused from the next request on, on REST and MCP, on every data server. Revoking again changes nothing.',
    params: z.object({ id: z.string().max(100) }),
    responses: { 200: { description: 'The key, revoked', schema: DataKey.extend({ account_id: z.uuid() }) } },
    handler: async (ctx, { params }) => {
      const revoked = await revokeAnyDataKey(db, params.id);
      ctx.state.auditBefore = revoked.before;
      ctx.body = { ...revoked.after, account_id: revoked.account_id };
    },
  });

  api.route({
    method: 'post',
    path: '/admin/data-keys',
    operationId: 'issueDataKey',
    summary: 'Issue a data API key',
    description: 'Makes the account of this e-mail when there is none, sets its tariff and issues a new svc_mcp_ key.',
    tags: ['Administration'],
    security: ['adminToken'],
    use: [requireAdmin(services.db, services.config.SVC_BOOTSTRAP_ADMIN_TOKEN)],
    body: z.object({
      email: EmailSchema.describe('The account owner'),
      tariff: z.enum(TARIFFS).default('free'),
    }),
    responses: {
      201: {
        description: 'The key, shown only now',
        schema: z.object({ key: z.string(), account_id: z.uuid(), tariff: z.enum(TARIFFS) }),
      },
    },
    handler: async (ctx, { body }) => {
      ctx.status = 201;
      ctx.body = await issueDataKey(services.db, body);
    },
  });
}
