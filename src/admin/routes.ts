// The administration's own operations: signing in as an administrator, the administrators, and the audit log.
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { EmailSchema } from '../accounts/users.ts';
import { queryInt } from '../http/query-values.ts';
import { ADMIN_ROLES, requireAdmin, type AdminActor } from './auth.ts';
import { listAudit } from './audit.ts';
import {
  adminSignIn,
  createAdministrator,
  findAdministrator,
  listAdministrators,
  updateAdministrator,
} from './administrators.ts';
import { problem } from '../http/problem.ts';

const AuditRecord = z.object({
  id: z.string().describe('Increasing with time'),
  at: z.iso.datetime(),
  actor: z.string().describe('`bootstrap`, `token:<name>`, or an administrator’s e-mail'),
  action: z.string().describe('The operation (its operationId in this document)'),
  object_type: z.string(),
  object_id: z.string().nullable(),
  before: z
    .unknown()
    .describe('The object before the action, when the action changed an existing one; secrets redacted'),
  after: z.unknown().describe('The answer of the action; secrets redacted'),
});
const Role = z
  .enum(ADMIN_ROLES)
  .describe('`admin` everything; `arbiter` deals and disputes, reads elsewhere; `support` reads, resends invitations');
const Administrator = z.object({
  id: z.uuid().describe('Their svc ID'),
  email: z.string(),
  name: z.string(),
  role: Role,
  status: z
    .enum(['invited', 'active', 'disabled'])
    .describe('`invited` until the setup link (password and TOTP) is used'),
  created_at: z.iso.datetime(),
  created_by: z.string(),
});
const IdParams = z.object({ id: z.string() });

export function adminRoutes(api: Api, services: Services): void {
  const { db } = services;
  const bootstrap = services.config.SVC_BOOTSTRAP_ADMIN_TOKEN;
  const admin = { tags: ['Administration'], security: ['adminToken'], use: [requireAdmin(db, bootstrap)] };
  const actorOf = (ctx: { state: { admin?: unknown } }) => (ctx.state.admin as AdminActor).actor;

  api.route({
    method: 'post',
    path: '/admin/login',
    operationId: 'adminLogin',
    summary: 'Sign in as an administrator: e-mail, password and the code of the authenticator app',
    description:
      'Failed attempts are limited like the cabinet’s (429 too_many_attempts with Retry-After). A code works once.',
    tags: ['Administration'],
    body: z.object({
      email: EmailSchema,
      password: z.string().min(1).max(200),
      totp: z.string().regex(/^[0-9 ]{6,7}$/, 'must be the 6 digits of the app'),
    }),
    responses: {
      200: {
        description: 'An administrator token, for Authorization: Bearer',
        schema: z.object({ token: z.string(), expires_at: z.iso.datetime(), role: Role }),
      },
    },
    handler: async (ctx, { body }) => {
      ctx.body = await adminSignIn(services, { ...body, ip: ctx.ip });
    },
  });

  api.route({
    ...admin,
    method: 'get',
    path: '/admin/administrators',
    operationId: 'listAdministrators',
    summary: 'The administrators',
    responses: {
      200: {
        description: 'Every administrator, oldest first',
        schema: z.object({ items: z.array(Administrator), has_more: z.boolean() }),
      },
    },
    handler: async (ctx) => {
      ctx.body = { items: await listAdministrators(db), has_more: false };
    },
  });

  api.route({
    ...admin,
    method: 'post',
    path: '/admin/administrators',
    operationId: 'createAdministrator',
    summary: 'Make someone an administrator',
    description:
      'Their account (made when the e-mail has none) gets the role and a mail with a one-time link, valid 3 days, to set a password and TOTP. 409 administrator_exists.',
    body: z.object({
      email: EmailSchema,
      role: Role,
      locale: z
        .enum(['ru', 'en'])
        .optional()
        .describe(
          "The language of the mail, and of the account unless its person chose one themselves (then the mail is in the person's). Left out: Russian for a new account.",
        ),
    }),
    responses: { 201: { description: 'The administrator, invited', schema: Administrator } },
    handler: async (ctx, { body }) => {
      ctx.status = 201;
      ctx.body = await createAdministrator(services, actorOf(ctx), body);
    },
  });

  api.route({
    ...admin,
    method: 'patch',
    path: '/admin/administrators/{id}',
    operationId: 'updateAdministrator',
    summary: 'Change an administrator’s role, or disable (and enable) them',
    description:
      'Disabling ends their sign-ins at once on every instance. 409 last_admin for the last enabled administrator with the admin role.',
    params: IdParams,
    body: z.object({ role: Role.optional(), disabled: z.boolean().optional() }),
    responses: { 200: { description: 'The administrator after the change', schema: Administrator } },
    handler: async (ctx, { params, body }) => {
      if (!(await findAdministrator(db, params.id))) throw problem('not_found', 'No such administrator.');
      const { before, after } = await updateAdministrator(services, params.id, body);
      ctx.state.auditBefore = before;
      ctx.body = after;
    },
  });

  api.route({
    ...admin,
    method: 'get',
    path: '/admin/audit',
    operationId: 'adminAudit',
    summary: 'The audit log of administrative actions, newest first',
    description:
      'Filter by `actor`, `action` and `object_id`; pass the last item’s id as `starting_after` for the next page.',
    query: z.object({
      actor: z.string().min(1).max(320).optional(),
      action: z.string().min(1).max(100).optional(),
      object_id: z.string().min(1).max(100).optional(),
      limit: queryInt(1, 100).default(50).describe('Records per page'),
      starting_after: z
        .string()
        .regex(/^[0-9]{1,18}$/, 'must be a record id')
        .optional()
        .describe('A record id: the page continues after it'),
    }),
    responses: {
      200: { description: 'The records', schema: z.object({ items: z.array(AuditRecord), has_more: z.boolean() }) },
    },
    handler: async (ctx, { query }) => {
      ctx.body = await listAudit(db, query);
    },
  });
}
