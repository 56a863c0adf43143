// The console's SSO client pages: the list (automatic clients of marketplaces marked) with registration, and the card
// (name and redirect URIs, the secret revealed on request, rotation, disable and enable, deletion). They call the
// functions the JSON operations call and write the same audit records; the dangerous changes ask for confirmation
// first, and a secret is only ever in the answer to a POST, never in an address. The signing keys' page lists the keys
// with their state and lets an administrator rotate the signing key (confirmed, audited as the JSON operation is).
import { emptyList, formText, pagePlace, pager, queryText, when, type PagePlace } from '../admin/console-kit.ts';
import {
  ANSWERED,
  type Answered,
  consoleAction,
  consoleActions,
  type ActionEntry,
  type Confirmation,
  type ConsoleAudit,
} from '../admin/console-actions.ts';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { html, type SafeHtml } from '../http/html.ts';
import { Problem } from '../http/problem.ts';
import { onceField, type Reveal } from '../admin/console-once.ts';
import { consolePage, notInConsole, type ConsolePage } from '../admin/console.ts';
import { csrfField, message } from '../web/layout.ts';
import { send } from '../web/page.ts';
import {
  clientCard,
  CLIENT_MAKERS,
  clientSummary,
  createClient,
  deleteClient,
  isClientCursor,
  listClients,
  rotateSecret,
  updateClient,
  type ClientCard,
  type ClientFilter,
  type ClientSummary,
} from './clients.ts';
import { parseRedirectUris } from './redirect-uris.ts';
import { listSigningKeys, rotateSigningKey, rotationPolicy, type SigningKeyState } from './signing-keys.ts';
import { ClientId } from './routes.ts';
import { ssoConsoleTranslator, type SsoConsoleMessage, type SsoConsoleTranslate } from './console-i18n.ts';

const LIST = '/admin/view/sso-clients';
const KEYS = '/admin/view/sso-signing-keys';
const PAGE_SIZE = 20;
const NAME_MAX = 200;
const DONE = ['saved', 'disabled', 'enabled', 'deleted'] as const;
type Done = (typeof DONE)[number];
/** The changes of the card that ask for confirmation, with the words of their confirmation page. */
const CONFIRMED = {
  rotate: ['rotateConfirmTitle', 'rotateConfirmText', 'rotateConfirmButton'],
  disable: ['disableConfirmTitle', 'disableConfirmText', 'disableConfirmButton'],
  enable: ['enableConfirmTitle', 'enableConfirmText', 'enableConfirmButton'],
  delete: ['deleteConfirmTitle', 'deleteConfirmText', 'deleteConfirmButton'],
} as const satisfies Record<string, readonly [SsoConsoleMessage, SsoConsoleMessage, SsoConsoleMessage]>;
type Confirmed = keyof typeof CONFIRMED;

type SsoPage = ConsolePage & { s: SsoConsoleTranslate };
const withWords = (p: ConsolePage): SsoPage => ({ ...p, s: ssoConsoleTranslator(p.lang) });
const doneOf = (value: unknown): Done | undefined => DONE.find((done) => done === value);
const cardPath = (clientId: string) => `${LIST}/${encodeURIComponent(clientId)}`;
/** Redirect URIs as people type them: one a line or separated by spaces. */
const uriText = (value: string) => value.split(/\s+/).filter(Boolean).join(' ');

export function ssoConsolePages(api: Api, services: Services): void {
  const router = api.router;
  const { db, masterKey } = services;

  router.get(
    LIST,
    consolePage(services, async (cp) => {
      const p = withWords(cp);
      const place = pagePlace(p.ctx.query, isClientCursor);
      const notice = doneOf(p.ctx.query.done) === 'deleted' ? p.s('done_deleted') : undefined;
      const filter = listFilter(p.ctx.query);
      const page = await listClients(db, { limit: PAGE_SIZE, starting_after: place.after, ...filter });
      send(p, 200, p.s('title'), listBody(p, page, { notice, place, filter }), undefined, p.admin);
    }),
  );

  router.post(
    LIST,
    consoleAction(services, {
      page: withWords,
      path: () => LIST,
      action: (p, _, form) => {
        const fields = {
          client_id: formText(form, 'client_id'),
          name: formText(form, 'name'),
          redirect_uris: uriText(form.get('redirect_uris') ?? ''),
        };
        const refuse = async (status: number, error: string): Promise<Answered> => {
          send(
            p,
            status,
            p.s('title'),
            listBody(p, await listClients(db, { limit: PAGE_SIZE }), { error, fields }),
            LIST,
            p.admin,
          );
          return ANSWERED;
        };
        if (!ClientId.safeParse(fields.client_id).success) return refuse(400, p.s('badClientId'));
        if (!fields.name || fields.name.length > NAME_MAX) return refuse(400, p.s('badName'));
        const uris = parseRedirectUris(fields.redirect_uris);
        if ('problem' in uris) return refuse(400, p.s('badRedirectUris', { reason: uris.problem }));
        return {
          once: true,
          run: async () => {
            const created = await createClient(db, masterKey, {
              client_id: fields.client_id,
              name: fields.name,
              redirect_uris: uris.uris,
            });
            return {
              audit: {
                action: 'createSsoClient',
                object_type: 'sso_client',
                object_id: created.client_id,
                after: created,
              },
              reveal: secretReveal(p, created, p.s('registeredTitle', { client: created.name }), p.s('secretOnce')),
            };
          },
          refused: (error) =>
            error instanceof Problem && error.code === 'client_id_taken'
              ? refuse(409, p.s('clientIdTaken'))
              : undefined,
        };
      },
    }),
  );

  router.get(
    `${LIST}/:client_id`,
    consolePage(services, async (cp) => {
      const p = withWords(cp);
      const client = await findOr404(String(p.ctx.params.client_id));
      const done = doneOf(p.ctx.query.done);
      send(
        p,
        200,
        p.s('cardTitle', { client: client.name }),
        cardBody(p, client, { notice: done && p.s(`done_${done}`) }),
        undefined,
        p.admin,
      );
    }),
  );

  // A secret lets its holder act as the client: only the admin role reveals it, and each reveal is audited as the JSON
  // card's read is. Post/redirect/get as a new secret is: a reload of the answer neither shows it again nor audits twice.
  router.post(
    `${LIST}/:client_id/secret`,
    consoleAction(services, {
      page: withWords,
      load: async (p) => {
        const card = await clientCard(db, masterKey, String(p.ctx.params.client_id));
        if (!card) throw notInConsole('SSO client');
        return card;
      },
      path: (card) => `${cardPath(card.client_id)}/secret`,
      action: (p, card) => ({
        once: true,
        run: async () => ({
          audit: { action: 'revealSsoClientSecret', object_type: 'sso_client', object_id: card.client_id },
          reveal: secretReveal(p, card, p.s('revealedTitle', { client: card.name }), p.s('revealedText')),
        }),
      }),
    }),
  );

  router.post(
    `${LIST}/:client_id`,
    consoleActions(services, {
      page: withWords,
      load: (p) => findOr404(String(p.ctx.params.client_id)),
      path: (client) => cardPath(client.client_id),
      unknown: 'Save, rotate, disable, enable or delete.',
      actions: (p, client, form) => {
        const audit = (action: string, before: unknown, after: unknown): ConsoleAudit => ({
          action,
          object_type: 'sso_client',
          object_id: client.client_id,
          before,
          after,
        });
        const ask = (intent: Confirmed): Confirmation => {
          const [title, text, button] = CONFIRMED[intent];
          return {
            title: p.s(title, { client: client.name }),
            text: p.s(text),
            button: p.s(button),
            fields: { intent },
            tone: intent === 'enable' ? 'plain' : 'danger',
          };
        };
        const switchTo =
          (intent: 'disable' | 'enable'): ActionEntry =>
          () => ({
            confirm: () => ask(intent),
            run: async () => {
              const changed = await updateClient(db, client.client_id, { disabled: intent === 'disable' });
              if (!changed) throw notInConsole('SSO client');
              return {
                audit: audit('updateSsoClient', changed.before, changed.after),
                location: `${cardPath(client.client_id)}?done=${intent === 'disable' ? 'disabled' : 'enabled'}`,
              };
            },
          });
        return {
          save: async () => {
            const name = formText(form, 'name');
            const uris = parseRedirectUris(uriText(form.get('redirect_uris') ?? ''));
            const error =
              !name || name.length > NAME_MAX
                ? p.s('badName')
                : 'problem' in uris
                  ? p.s('badRedirectUris', { reason: uris.problem })
                  : undefined;
            if (error || 'problem' in uris) {
              send(
                p,
                400,
                p.s('cardTitle', { client: client.name }),
                cardBody(p, client, { error }),
                cardPath(client.client_id),
                p.admin,
              );
              return ANSWERED;
            }
            return {
              run: async () => {
                const changed = await updateClient(db, client.client_id, { name, redirect_uris: uris.uris });
                if (!changed) throw notInConsole('SSO client');
                return {
                  audit: audit('updateSsoClient', changed.before, changed.after),
                  location: `${cardPath(client.client_id)}?done=saved`,
                };
              },
            };
          },
          rotate: () => ({
            confirm: () => ask('rotate'),
            once: true,
            run: async () => {
              const rotated = await rotateSecret(db, masterKey, client.client_id);
              if (!rotated) throw notInConsole('SSO client');
              return {
                audit: audit('rotateSsoClientSecret', client, rotated),
                reveal: secretReveal(p, rotated, p.s('rotatedTitle', { client: client.name }), p.s('rotatedText')),
              };
            },
          }),
          disable: switchTo('disable'),
          enable: switchTo('enable'),
          delete: () => ({
            confirm: () => ask('delete'),
            run: async () => {
              const deleted = await deleteClient(db, client.client_id);
              if (!deleted) throw notInConsole('SSO client');
              return { audit: audit('deleteSsoClient', deleted, undefined), location: `${LIST}?done=deleted` };
            },
          }),
        };
      },
    }),
  );

  router.get(
    KEYS,
    consolePage(services, async (cp) => {
      const p = withWords(cp);
      const notice = p.ctx.query.done === 'rotated' ? p.s('done_keyRotated') : undefined;
      send(p, 200, p.s('keysTitle'), keysBody(p, await listSigningKeys(db), notice), undefined, p.admin);
    }),
  );

  router.post(
    KEYS,
    consoleAction(services, {
      page: withWords,
      path: () => KEYS,
      action: (p) => ({
        confirm: () => ({
          title: p.s('rotateKeyConfirmTitle'),
          text: p.s('rotateKeyConfirmText'),
          button: p.s('rotateKeyConfirmButton'),
          fields: {},
          tone: 'plain',
        }),
        run: async () => {
          const policy = rotationPolicy(services.config);
          const rotated = await rotateSigningKey(db, masterKey, {
            activateAfterSeconds: policy.publishSeconds,
            overlapSeconds: policy.overlapSeconds,
          });
          return {
            audit: {
              action: 'rotateSsoSigningKey',
              object_type: 'sso_signing_key',
              object_id: rotated.kid,
              after: rotated,
            },
            location: `${KEYS}?done=rotated`,
          };
        },
      }),
    }),
  );

  async function findOr404(clientId: string): Promise<ClientSummary> {
    const client = await clientSummary(db, clientId);
    if (!client) throw notInConsole('SSO client');
    return client;
  }
}

const canChange = (p: SsoPage) => p.admin.role === 'admin';

/** The list's filters from the query; a value the form does not offer matches every client. */
function listFilter(query: Readonly<Record<string, unknown>>): ClientFilter {
  const pick = <T extends string>(name: string, values: readonly T[]) => values.find((value) => value === query[name]);
  return {
    q: queryText(query, 'q', 200) || undefined,
    type: pick('type', ['public', 'confidential'] as const),
    made: pick('made', CLIENT_MAKERS),
    state: pick('state', ['enabled', 'disabled'] as const),
  };
}

function listBody(
  p: SsoPage,
  page: { items: ClientSummary[]; has_more: boolean },
  state: {
    notice?: string;
    error?: string;
    fields?: { client_id: string; name: string; redirect_uris: string };
    /** Which page of the list this is (the first, in the answer to a form). */
    place?: PagePlace;
    /** The list's filters (none, in the answer to a form). */
    filter?: ClientFilter;
  },
): SafeHtml {
  const { s } = p;
  const filter = state.filter ?? {};
  const pages = pager(p.lang, {
    path: LIST,
    filters: filter,
    place: state.place ?? { trail: [] },
    last: page.has_more ? page.items.at(-1)!.client_id : undefined,
  });
  const option = (value: string, label: string, current: string | undefined) =>
    html`<option value="${value}"${value === (current ?? '') ? html` selected` : ''}>${label}</option>`;
  return html`<h1>${s('title')}</h1><p class="muted">${s('intro')}</p>
<p><a href="${KEYS}">${s('keysLink')}</a></p>
${message('notice', state.notice)}${message('error', state.error)}
<form method="get" action="${LIST}" class="filters" id="client-filters">
<div><label for="f-q">${s('search')}</label><input id="f-q" name="q" value="${filter.q ?? ''}" maxlength="200"></div>
<div><label for="f-type">${s('clientType')}</label><select id="f-type" name="type">${option('', s('anyType'), filter.type)}${option('public', s('typePublic'), filter.type)}${option('confidential', s('typeConfidential'), filter.type)}</select></div>
<div><label for="f-made">${s('kind')}</label><select id="f-made" name="made">${option('', s('anyKind'), filter.made)}${option('marketplace', s('automatic'), filter.made)}${option('here', s('registeredHere'), filter.made)}${option('itself', s('registeredItself'), filter.made)}</select></div>
<div><label for="f-state">${s('state')}</label><select id="f-state" name="state">${option('', s('anyState'), filter.state)}${option('enabled', s('enabled'), filter.state)}${option('disabled', s('disabled'), filter.state)}</select></div>
<div><button type="submit">${s('show')}</button></div></form>
${
  page.items.length === 0
    ? emptyList(p.lang, { filtered: Object.values(filter).some(Boolean), none: s('noClients'), path: LIST })
    : html`<div class="table" tabindex="0"><table>
<thead><tr><th>${s('clientId')}</th><th>${s('name')}</th><th>${s('kind')}</th><th>${s('state')}</th><th>${s('created')}</th></tr></thead>
<tbody>${page.items.map(
        (
          client,
        ) => html`<tr><td><a href="${cardPath(client.client_id)}"><code>${client.client_id}</code></a></td><td>${client.name}</td>
<td>${kindWords(s, client)}</td>
<td>${client.disabled ? html`<strong>${s('disabled')}</strong>` : s('enabled')}</td><td>${when(p.lang, client.created_at)}</td></tr>`,
      )}</tbody></table></div>`
}
${pages}
${
  canChange(p)
    ? html`<section aria-labelledby="register"><h2 id="register">${s('registerTitle')}</h2>
<form method="post" action="${LIST}">${csrfField(p.admin.csrf)}${onceField()}
<label for="client_id">${s('clientId')}</label><input id="client_id" name="client_id" required maxlength="128" value="${state.fields?.client_id ?? ''}" aria-describedby="client-id-hint">
<p class="hint" id="client-id-hint">${s('clientIdHint')}</p>
<label for="name">${s('name')}</label><input id="name" name="name" required maxlength="${NAME_MAX}" value="${state.fields?.name ?? ''}">
<label for="redirect_uris">${s('redirectUris')}</label><textarea id="redirect_uris" name="redirect_uris" rows="3" required aria-describedby="uris-hint">${state.fields?.redirect_uris ?? ''}</textarea>
<p class="hint" id="uris-hint">${s('redirectUrisHint')}</p>
<div><button type="submit">${s('registerButton')}</button></div></form></section>`
    : html`<p class="muted">${s('readOnly')}</p>`
}`;
}

/** Who made the client: a marketplace (automatic), an administrator here, or the client itself (RFC 7591). */
function kindWords(s: SsoPage['s'], client: ClientSummary): SafeHtml | string {
  if (client.automatic) return html`<span class="status">${s('automatic')}</span>`;
  return client.registered_dynamically
    ? html`<span class="status">${s('registeredItself')}</span>`
    : s('registeredHere');
}

function uriItems(s: SsoPage['s'], uris: string): SafeHtml | string {
  const list = uris.split(' ').filter(Boolean);
  return list.length === 0
    ? s('none')
    : html`<ul class="plain">${list.map((uri) => html`<li><code>${uri}</code></li>`)}</ul>`;
}

function cardBody(p: SsoPage, client: ClientSummary, state: { notice?: string; error?: string }): SafeHtml {
  const { s, c } = p;
  const path = cardPath(client.client_id);
  const intentForm = (intent: string, label: string, kind: 'secondary' | 'danger') =>
    html`<form method="post" action="${path}" class="inline">${csrfField(p.admin.csrf)}<input type="hidden" name="intent" value="${intent}"><button type="submit" class="${kind}">${label}</button></form>`;
  return html`<p><a href="${LIST}">${s('allClients')}</a></p>
<h1>${s('cardTitle', { client: client.name })}</h1>
${message('notice', state.notice)}${message('error', state.error)}
<dl>
<dt>${s('clientId')}</dt><dd><code id="client-id">${client.client_id}</code></dd>
<dt>${s('kind')}</dt><dd>${kindWords(s, client)}</dd>
<dt>${s('state')}</dt><dd id="client-state">${client.disabled ? html`<strong>${s('disabled')}</strong>` : s('enabled')}</dd>
<dt>${s('redirectUris')}</dt><dd><ul class="plain">${client.redirect_uris.split(' ').map((uri) => html`<li><code>${uri}</code></li>`)}</ul></dd>
<dt>${s('created')}</dt><dd>${when(p.lang, client.created_at)}</dd>
<dt>${s('rotatedAt')}</dt><dd>${client.secret_rotated_at ? when(p.lang, client.secret_rotated_at) : s('never')}</dd>
<dt>${s('authMethod')}</dt><dd>${client.token_endpoint_auth_method === 'none' ? s('authNone') : s('authSecret', { method: client.token_endpoint_auth_method })}</dd>
<dt>${s('subjectType')}</dt><dd>${client.subject_type === 'pairwise' ? s('subjectPairwise') : s('subjectPublic')}</dd>
<dt>${s('postLogoutUris')}</dt><dd>${uriItems(s, client.post_logout_redirect_uris)}</dd>
<dt>${s('backchannelUri')}</dt><dd>${client.backchannel_logout_uri ? html`<code>${client.backchannel_logout_uri}</code>` : s('none')}</dd>
</dl>
${client.automatic && html`<p class="notice">${s('marketplaceOwned')} <a href="/admin/view/marketplaces/${client.marketplace_id}">${s('openMarketplace')}</a></p>`}
${
  canChange(p) &&
  html`<section aria-labelledby="secret" class="card"><h2 id="secret">${s('secret')}</h2>
<form method="post" action="${path}/secret">${csrfField(p.admin.csrf)}${onceField()}<button type="submit" class="secondary">${s('revealButton')}</button></form>
<p class="hint">${s('revealHint')}</p></section>`
}
${
  canChange(p)
    ? html`${
        !client.automatic &&
        html`<section aria-labelledby="edit"><h2 id="edit">${s('editTitle')}</h2>
<form method="post" action="${path}">${csrfField(p.admin.csrf)}<input type="hidden" name="intent" value="save">
<label for="name">${s('name')}</label><input id="name" name="name" required maxlength="${NAME_MAX}" value="${client.name}">
<label for="redirect_uris">${s('redirectUris')}</label><textarea id="redirect_uris" name="redirect_uris" rows="4" required aria-describedby="uris-hint">${client.redirect_uris.split(' ').join('\n')}</textarea>
<p class="hint" id="uris-hint">${s('redirectUrisHint')}</p>
<div><button type="submit">${c('save')}</button></div></form></section>`
      }
<div class="actions">
${intentForm('rotate', s('rotateButton'), 'secondary')}
${client.disabled ? intentForm('enable', s('enableButton'), 'secondary') : intentForm('disable', s('disableButton'), 'danger')}
${!client.automatic && intentForm('delete', s('deleteButton'), 'danger')}
</div>`
    : html`<p class="muted">${s('readOnly')}</p>`
}`;
}

function keysBody(p: SsoPage, keys: SigningKeyState[], notice: string | undefined): SafeHtml {
  const { s } = p;
  return html`<p><a href="${LIST}">${s('allClients')}</a></p>
<h1>${s('keysTitle')}</h1><p class="muted">${s('keysIntro')}</p>
${message('notice', notice)}
<div class="table" tabindex="0"><table>
<thead><tr><th>${s('kid')}</th><th>${s('state')}</th><th>${s('created')}</th><th>${s('notBefore')}</th><th>${s('retiresAt')}</th></tr></thead>
<tbody>${keys.map(
    (key) => html`<tr><td><code>${key.kid}</code></td><td class="key-state">${s(`keyState_${key.state}`)}</td>
<td>${when(p.lang, key.created_at)}</td><td>${when(p.lang, key.not_before)}</td><td>${key.retires_at ? when(p.lang, key.retires_at) : '—'}</td></tr>`,
  )}</tbody></table></div>
${
  canChange(p)
    ? html`<form method="post" action="${KEYS}">${csrfField(p.admin.csrf)}<button type="submit" class="secondary">${s('rotateKeyButton')}</button></form>`
    : html`<p class="muted">${s('readOnly')}</p>`
}`;
}

/** A secret shown in the answer to the POST that reveals it; the page is not stored (no-store). */
/** A secret (registration, rotation, a reveal), shown once on the page after the redirect (console-once.ts). */
function secretReveal(p: SsoPage, card: ClientCard, title: string, text: string): Reveal {
  return {
    title,
    warning: text,
    items: [
      [p.s('clientId'), 'client-id', card.client_id],
      [p.s('secret'), 'client-secret', card.client_secret ?? ''],
    ],
    back: { href: cardPath(card.client_id), label: p.s('openCard') },
  };
}
