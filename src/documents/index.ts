// Chooses the document store from the configuration: the filesystem under DATA_DIR, or S3 when DOCUMENT_STORE=s3.
import path from 'node:path';
import type { Config } from '../config.ts';
import type { DocumentStore } from './store.ts';
import { FilesystemDocumentStore } from './filesystem.ts';
import { S3DocumentStore } from './s3.ts';

export type { DocumentStore, StoredObject } from './store.ts';
export { FilesystemDocumentStore } from './filesystem.ts';
export { S3DocumentStore, type S3StoreOptions } from './s3.ts';
export { DocumentNotFoundError, InvalidDocumentKeyError, documentKey, parseDocumentKey } from './keys.ts';

export function createDocumentStore(config: Config): DocumentStore {
  if (config.DOCUMENT_STORE === 'filesystem')
    return new FilesystemDocumentStore(path.join(config.DATA_DIR, 'documents'));
  if (!config.S3_BUCKET)
    throw new Error('DOCUMENT_STORE=s3 needs S3_BUCKET: set it to the bucket that keeps documents.');
  const { S3_ACCESS_KEY_ID: accessKeyId, S3_SECRET_ACCESS_KEY: secretAccessKey } = config;
  // Half a key pair would silently fall back to the SDK's default chain; say which half is missing instead.
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey)) {
    const missing = accessKeyId ? 'S3_SECRET_ACCESS_KEY' : 'S3_ACCESS_KEY_ID';
    throw new Error(`S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together: set ${missing} as well.`);
  }
  return new S3DocumentStore({
    bucket: config.S3_BUCKET,
    region: config.S3_REGION,
    endpoint: config.S3_ENDPOINT,
    forcePathStyle: config.S3_FORCE_PATH_STYLE === 'true',
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined,
  });
}
