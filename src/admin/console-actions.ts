// A console page's changes as a table of actions, one per `intent` of its forms. The kit does what every change
// does: it reads the form after checking its CSRF token (consoleForm; any role outside `may` is refused by
// consolePage before that), asks first when the action is irreversible and the form has no `confirmed=yes`, runs the
// verb (at most once per form when it creates something: runOnce), writes what the verb returns to the audit log as
// the signed-in administrator, and redirects (303) to a page that says what happened in words. A refusal comes back
// as the usual error page (a thrown Problem) or as the page the action answers itself.
import type { Services } from '../services.ts';
import { html, type SafeHtml } from '../http/html.ts';
import { problem } from '../http/problem.ts';
import { csrfField } from '../web/layout.ts';
import { redirect, send } from '../web/page.ts';
import type { AuditEntry } from './audit.ts';
import type { AdminRole } from './auth.ts';
import { auditConsole, consoleForm, consolePage, type ConsolePage } from './console.ts';
import { onceField, runOnce, type Reveal } from './console-once.ts';

/** An audit log entry of a console change; the actor is the signed-in administrator. */
export type ConsoleAudit = Omit<AuditEntry, 'actor'>;

/** The action has answered the request itself (a page with the refusal in words, the card with a secret shown). */
export const ANSWERED = Symbol('answered');
export type Answered = typeof ANSWERED;

/** What a verb did: the entries to audit, then where to go (with its `?done=` notice), or keys to show once. */
export type ActionDone = { audit?: ConsoleAudit | readonly ConsoleAudit[] } & (
  { location: string; reveal?: undefined } | { reveal: Reveal; location?: undefined }
);

/** The question an irreversible action asks first, in the section's words. */
export interface Confirmation {
  title: string;
  text: string;
  /** The button that confirms ("Yes, rotate"). */
  button: string;
  /** The form's fields to send again with `confirmed=yes` (the `intent` among them). */
  fields: Readonly<Record<string, string | readonly string[]>>;
  /** A confirmation that undoes nothing dangerous (enabling again) has a plain button; by default it is red. */
  tone?: 'danger' | 'plain';
}

export interface ConsoleAction {
  /** Asked on a post without `confirmed=yes`; none, or undefined from it, runs the verb at once. */
  confirm?: () => Confirmation | Answered | undefined | Promise<Confirmation | Answered | undefined>;
  /** The form carries a `_once` key and a second post of it goes where the first went (console-once.ts). */
  once?: boolean;
  /** The verb: does the change and says what to audit and where to go. */
  run: () => Promise<ActionDone | Answered>;
  /** A failure of the verb to answer in words (a page with the refusal); anything else is the error page. */
  refused?: (error: unknown) => Answered | undefined | Promise<Answered | undefined>;
}

/** A table entry: checks the form (throwing or answering a refusal) and describes the action. */
export type ActionEntry = () => ConsoleAction | Answered | Promise<ConsoleAction | Answered>;

/** A console page's POST: who may act, the page's words, its object, and where its confirmation posts. */
export interface ConsoleActionPage<P extends ConsolePage, S> {
  /** The roles that may act (consolePage's `may`; by default `admin` alone). */
  may?: readonly AdminRole[];
  /** The page with the section's words. */
  page: (p: ConsolePage) => P;
  /** The object the page is about (a 404 when it does not exist); none by default. */
  load?: (p: P) => Promise<S>;
  /** Where the confirmation is posted (the page's address). */
  path: (subject: S) => string;
  /** The page to go back to from a confirmation (its "Cancel" and its language switch), when not `path`. */
  cancel?: (subject: S) => string;
  /** The word of the confirmation's "Cancel". */
  cancelWord?: (p: P) => string;
}

export interface ConsoleActions<P extends ConsolePage, S> extends ConsoleActionPage<P, S> {
  /** The actions by the form's `intent`; an intent not in the table is 400. */
  actions: (p: P, subject: S, form: URLSearchParams) => Readonly<Record<string, ActionEntry>>;
  /** The developer's words of the 400 for an unknown intent. */
  unknown?: string;
}

/** The POST handler of a console page whose forms are a table of actions, one per `intent`. */
export function consoleActions<P extends ConsolePage, S>(services: Services, options: ConsoleActions<P, S>) {
  return consoleAction(services, {
    ...options,
    action: (p, subject, form) => {
      const table = options.actions(p, subject, form);
      const intent = form.get('intent') ?? '';
      const entry = Object.hasOwn(table, intent) ? table[intent] : undefined;
      if (!entry) throw problem('validation_failed', options.unknown ?? 'An action of the form.');
      return entry();
    },
  });
}

/** The POST handler of an address that does one thing (its form has no `intent`). */
export function consoleAction<P extends ConsolePage, S = undefined>(
  services: Services,
  options: ConsoleActionPage<P, S> & {
    action: (p: P, subject: S, form: URLSearchParams) => ReturnType<ActionEntry>;
  },
) {
  return consolePage(
    services,
    async (cp) => {
      const p = options.page(cp);
      const form = await consoleForm(p);
      const subject = options.load ? await options.load(p) : (undefined as S);
      const action = await options.action(p, subject, form);
      if (action === ANSWERED) return;
      if (action.confirm && form.get('confirmed') !== 'yes') {
        const question = await action.confirm();
        if (question === ANSWERED) return;
        if (question) {
          const path = options.path(subject);
          const cancel = options.cancel?.(subject) ?? path;
          const cancelWord = options.cancelWord?.(p) ?? p.c('cancel');
          return send(p, 200, question.title, confirmationBody(p, path, cancel, cancelWord, question), cancel, p.admin);
        }
      }
      const finish = async (done: ActionDone) => {
        for (const entry of [done.audit ?? []].flat()) await auditConsole(p, services, entry);
        return done;
      };
      // A failure of the verb that `refused` answers in words: the claim of a `_once` form is freed (runOnce), so the
      // corrected form can be sent again. A failure of the audit is never a refusal: the change was made.
      let answered = false;
      const verb = async () => {
        try {
          return await action.run();
        } catch (error) {
          answered = action.refused !== undefined && (await action.refused(error)) === ANSWERED;
          throw error;
        }
      };
      try {
        if (action.once) {
          return await runOnce(p, services, form, async () => {
            const done = await verb();
            if (done === ANSWERED) throw new Error('An action that runs once answers with a place to go.');
            return finish(done);
          });
        }
        const done = await verb();
        if (done === ANSWERED) return;
        await finish(done);
        if (done.location !== undefined) return redirect(p.ctx, done.location);
        throw new Error('An action that keys are shown for runs once.');
      } catch (error) {
        if (answered) return;
        throw error;
      }
    },
    { may: options.may },
  );
}

const hidden = (name: string, value: string) => html`<input type="hidden" name="${name}" value="${value}">`;

/** The confirmation page: the question, its consequence, and the form that sends the fields again, confirmed. */
export function confirmationBody(
  p: ConsolePage,
  path: string,
  cancel: string,
  cancelWord: string,
  question: Confirmation,
): SafeHtml {
  const fields = Object.entries(question.fields).map(([name, value]) =>
    (typeof value === 'string' ? [value] : value).map((one) => hidden(name, one)),
  );
  const button =
    question.tone === 'plain'
      ? html`<button type="submit">${question.button}</button>`
      : html`<button type="submit" class="danger">${question.button}</button>`;
  return html`<h1>${question.title}</h1>
<p class="consequence">${question.text}</p>
<form method="post" action="${path}">${csrfField(p.admin.csrf)}
${fields}${hidden('confirmed', 'yes')}${onceField()}
<div class="actions">${button} <a class="button secondary" href="${cancel}">${cancelWord}</a></div></form>`;
}
