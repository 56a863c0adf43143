// The form a buyer or a seller sends to a deal's open dispute: a message and evidence files, as multipart/form-data.
// One schema for the JSON route (routes.ts), its OpenAPI document, and the deal page's form (pages.ts).
import type { Context } from 'koa';
import { z } from 'zod';
import { strict } from '../http/api.ts';
import { readMultipart, type FormFile } from '../http/multipart.ts';
import { assertText } from '../http/text.ts';
import { problem, validationFailed } from '../http/problem.ts';

export const MESSAGE_TEXT_MAX = 5000;
export const EVIDENCE_FILES_MAX = 5;
export const EVIDENCE_FILE_LIMIT_BYTES = 10 * 1024 * 1024;
/** The whole form: the files together stay within what one document upload may be; the text and headers fit in the rest. */
export const MESSAGE_FORM_LIMIT_BYTES = 25 * 1024 * 1024 + 64 * 1024;
/** Parts beyond the files, the text and the page's CSRF token are never needed; a flood of tiny parts stops here. */
const MAX_PARTS = 32;

const EvidenceFile = z
  .custom<FormFile>(
    (value) => typeof value === 'object' && value !== null && Buffer.isBuffer((value as FormFile).bytes),
    {
      message: 'must be a file (a part with a filename)',
    },
  )
  .refine((file) => file.bytes.length <= EVIDENCE_FILE_LIMIT_BYTES, {
    message: `must be at most ${EVIDENCE_FILE_LIMIT_BYTES / 1024 / 1024} MiB`,
  })
  .meta({ type: 'string', format: 'binary' } as never);

export const DisputeMessageForm = z.object({
  // A photo says enough on its own: the text may be left out (or blank) when files come with it, not otherwise.
  text: z
    .string()
    .max(MESSAGE_TEXT_MAX, { abort: true })
    .trim()
    .default('')
    .describe(
      'The message; the other side, the marketplace and the arbiter read it. May be left out when files are attached ' +
        '(400 validation_failed naming `text` when neither is given)',
    ),
  files: z
    .array(EvidenceFile)
    .max(EVIDENCE_FILES_MAX)
    .default([])
    .describe(
      `Evidence: up to ${EVIDENCE_FILES_MAX} files (the field repeated), each up to ${EVIDENCE_FILE_LIMIT_BYTES / 1024 / 1024} MiB`,
    ),
});
const StrictDisputeMessageForm = strict(DisputeMessageForm);

export type DisputeMessageInput = { text: string; files: { name: string; contentType: string; bytes: Buffer }[] };

/**
 * Reads the multipart body into field values (a field sent once as a string, repeated as a list; files always as a
 * list), after the text rule on every field, file name and file type. The page takes its CSRF token out before parsing.
 */
export async function readMessageFormValues(ctx: Context): Promise<Record<string, unknown>> {
  const form = await readMultipart(ctx, { limitBytes: MESSAGE_FORM_LIMIT_BYTES, maxParts: MAX_PARTS });
  const texts = Object.fromEntries(
    [...form.fields].map(([name, values]) => [name, values.length === 1 ? values[0] : values]),
  );
  const fileNames = Object.fromEntries(
    [...form.files].map(([name, files]) => [
      name,
      files.map((file) => ({ name: file.name, content_type: file.contentType })),
    ]),
  );
  assertText({ ...texts, ...fileNames }, 'body');
  return { ...texts, ...Object.fromEntries(form.files) };
}

/** The message and its files, or 400 validation_failed naming each wrong or unknown field. */
export function parseMessageForm(values: Record<string, unknown>): DisputeMessageInput {
  const parsed = StrictDisputeMessageForm.safeParse(values);
  if (!parsed.success) throw validationFailed(parsed.error, 'body');
  if (parsed.data.text === '' && parsed.data.files.length === 0) {
    const message = 'must not be blank when no file is attached';
    throw problem('validation_failed', `The request body is invalid: text: ${message}`, {
      errors: [{ path: 'text', message }],
    });
  }
  return { text: parsed.data.text, files: parsed.data.files };
}

/** Photos a page may show (a preview, and the file itself inline): raster images, which a browser never runs. */
const PREVIEWABLE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

export function isPreviewable(contentType: string): boolean {
  return PREVIEWABLE_TYPES.has(contentType.split(';')[0].trim().toLowerCase());
}
