// The key scheme both stores share: `org/<organizationId>/<documentId>`. Only UUIDs are accepted, so a key can never
// name a path outside the store (no `..`, no slashes) and every document has exactly one key.

import { isUuid } from '../uuid.ts';

const KEY = /^org\/([^/]+)\/([^/]+)$/;

/** A key or id that is not of our scheme: a caller's bug or an attack, never worth a retry. */
export class InvalidDocumentKeyError extends Error {
  override name = 'InvalidDocumentKeyError';
}

/** No document under this key. */
export class DocumentNotFoundError extends Error {
  override name = 'DocumentNotFoundError';
  constructor(readonly key: string) {
    super(`No document is stored under ${key}`);
  }
}

/** The key of a document; ids are lowercased so that one document has one key. */
export function documentKey(organizationId: string, documentId: string): string {
  for (const [name, id] of [
    ['organizationId', organizationId],
    ['documentId', documentId],
  ] as const) {
    if (!isUuid(id)) throw new InvalidDocumentKeyError(`${name} must be a UUID, got ${JSON.stringify(id)}`);
  }
  return `org/${organizationId.toLowerCase()}/${documentId.toLowerCase()}`;
}

/** Checks that a key is one `documentKey` made; returns its parts. */
export function parseDocumentKey(key: string): { organizationId: string; documentId: string } {
  const match = KEY.exec(key);
  // Only the lower-case form documentKey writes: one document, one key.
  if (!match || !isUuid(match[1]) || !isUuid(match[2]) || key !== key.toLowerCase())
    throw new InvalidDocumentKeyError(`Not a document key: ${JSON.stringify(key)}`);
  return { organizationId: match[1], documentId: match[2] };
}
