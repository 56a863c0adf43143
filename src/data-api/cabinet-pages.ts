// The cabinet's data keys page: tariff and usage, the keys, issuing a named key and revoking one after a confirmation,
// over the same operations as the JSON routes (cabinet-routes.ts). A new key is shown once, in the answer to the form
// that issued it (pages are never cached: Cache-Control no-store), never in an address or a redirect.
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { notFound, Problem } from '../http/problem.ts';
import { sameToken } from '../web/session.ts';
import {
  csrfFailed,
  page,
  readForm,
  redirect,
  send,
  signedInOrRedirect,
  type Page,
  type SignedIn,
} from '../web/page.ts';
import { dataKeysTranslator } from './cabinet-i18n.ts';
import { issuedBody, keysBody, KEYS_PATH, revokeBody, revokePath, type KeysView } from './cabinet-page-views.ts';
import { DataKeyName } from './cabinet-routes.ts';
import { DATA_KEY_NAME_MAX, ACTIVE_DATA_KEYS_MAX, issueOwnDataKey, listDataKeys, revokeDataKey } from './keys.ts';
import { accountUsage } from './quota.ts';

const view = (p: Page): KeysView => ({ ...p, d: dataKeysTranslator(p.lang) });

export function dataKeyCabinetPages(api: Api, services: Services): void {
  const router = api.router;
  const { db } = services;

  router.get(
    KEYS_PATH,
    page(services, async (p) => {
      const signed = await signedInOrRedirect(p, services);
      if (!signed) return;
      const notice = p.ctx.query.done === 'revoked' ? view(p).d('done_revoked') : undefined;
      await keysPage(p, services, signed, 200, { notice });
    }),
  );

  router.post(
    KEYS_PATH,
    page(services, async (p) => {
      const signed = await signedInOrRedirect(p, services, KEYS_PATH);
      if (!signed) return;
      const { d } = view(p);
      let form: URLSearchParams;
      try {
        form = await readForm(p.ctx);
      } catch (error) {
        // Text the service refuses (a control character): the page again, saying why; nothing was issued.
        if (error instanceof Problem && error.code === 'validation_failed')
          return keysPage(p, services, signed, 400, { error: d('nameInvalid') });
        throw error;
      }
      if (!sameToken(signed.csrf, form.get('_csrf') ?? undefined)) throw csrfFailed();
      const name = form.get('name') ?? '';
      const parsed = DataKeyName.safeParse(name);
      if (!parsed.success) {
        const error = name.length > DATA_KEY_NAME_MAX ? d('nameTooLong', { max: DATA_KEY_NAME_MAX }) : d('nameBlank');
        return keysPage(p, services, signed, 400, { name: name.slice(0, DATA_KEY_NAME_MAX), error });
      }
      let issued: { name: string; key: string };
      try {
        issued = await issueOwnDataKey(db, signed.user.id, parsed.data);
      } catch (error) {
        if (error instanceof Problem && error.code === 'too_many_data_keys') {
          return keysPage(p, services, signed, 409, { name, error: d('tooManyKeys', { max: ACTIVE_DATA_KEYS_MAX }) });
        }
        throw error;
      }
      send(p, 200, d('issuedTitle'), issuedBody(view(p), issued), KEYS_PATH, signed);
    }),
  );

  // The confirmation: what revoking does, in words; nothing changes until its form is sent.
  router.get(
    revokePath(':id'),
    page(services, async (p) => {
      const signed = await signedInOrRedirect(p, services);
      if (!signed) return;
      await confirmPage(p, services, signed, p.ctx.params.id);
    }),
  );

  router.post(
    revokePath(':id'),
    page(services, async (p) => {
      const form = await readForm(p.ctx);
      const signed = await signedInOrRedirect(p, services, KEYS_PATH);
      if (!signed) return;
      if (!sameToken(signed.csrf, form.get('_csrf') ?? undefined)) throw csrfFailed();
      const id = p.ctx.params.id!;
      // Only the confirmation page's form revokes; a form from anywhere else gets that page first.
      if (form.get('confirmed') !== 'yes') return confirmPage(p, services, signed, id);
      await revokeDataKey(db, signed.user.id, id);
      redirect(p.ctx, `${KEYS_PATH}?done=revoked`);
    }),
  );
}

async function keysPage(
  p: Page,
  services: Services,
  signed: SignedIn,
  status: number,
  words: { name?: string; error?: string; notice?: string },
) {
  const [usage, keys] = await Promise.all([
    accountUsage(services.db, signed.user.id),
    listDataKeys(services.db, signed.user.id),
  ]);
  const body = keysBody(view(p), { usage, keys, csrf: signed.csrf, dataUrl: services.config.MCP_URL, ...words });
  send(p, status, view(p).d('title'), body, KEYS_PATH, signed);
}

/** The confirmation for one of the user's keys; another user's key (or no key) is a 404 page. */
async function confirmPage(p: Page, services: Services, signed: SignedIn, id: string) {
  const key = (await listDataKeys(services.db, signed.user.id)).find((candidate) => candidate.id === id);
  if (!key) throw notFound('No such data API key.');
  send(p, 200, view(p).d('revokeTitle'), revokeBody(view(p), { key, csrf: signed.csrf }), revokePath(key.id), signed);
}
