// Documents as files under DATA_DIR/documents. A document is written to a temporary file in the same directory and
// renamed into place, so a crash leaves at most a stray temporary file, never a half document under its key. Files
// are the service user's alone (0600, directories 0700): other accounts on the machine have no business reading them.
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { DocumentStore, StoredObject } from './store.ts';
import { DocumentNotFoundError, documentKey, parseDocumentKey } from './keys.ts';

export class FilesystemDocumentStore implements DocumentStore {
  constructor(readonly root: string) {}

  async put(input: {
    organizationId: string;
    documentId: string;
    bytes: Buffer;
    contentType: string;
  }): Promise<StoredObject> {
    const key = documentKey(input.organizationId, input.documentId);
    const target = path.join(this.root, key);
    const directory = path.dirname(target);
    await mkdir(directory, { recursive: true, mode: 0o700 });
    // Unique per call: concurrent puts of one document never share a temporary file; the last rename wins whole.
    const temporary = path.join(directory, `.${path.basename(target)}.${randomUUID()}.tmp`);
    const hash = createHash('sha256');
    try {
      const file = await open(temporary, 'wx', 0o600);
      try {
        await file.writeFile(input.bytes);
        hash.update(input.bytes);
        await file.sync(); // the bytes are on disk before the name points at them
      } finally {
        await file.close();
      }
      await rename(temporary, target);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    await syncDirectory(directory); // makes the rename itself survive a crash
    return { key, size: input.bytes.length, sha256: hash.digest('hex') };
  }

  async get(key: string): Promise<Buffer> {
    parseDocumentKey(key); // refuses anything but org/<uuid>/<uuid>, so the path stays under root
    try {
      return await readFile(path.join(this.root, key));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new DocumentNotFoundError(key);
      throw error;
    }
  }

  async remove(key: string): Promise<void> {
    parseDocumentKey(key);
    await rm(path.join(this.root, key), { force: true });
  }
}

async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
