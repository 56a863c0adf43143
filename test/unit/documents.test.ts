// The document store: the filesystem under DATA_DIR and S3 (the real SDK against a local S3 double) keep the same
// bytes under the same keys, verify integrity, and refuse ids that could escape their place.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../src/config.ts';
import {
  createDocumentStore,
  DocumentNotFoundError,
  FilesystemDocumentStore,
  InvalidDocumentKeyError,
  S3DocumentStore,
  type DocumentStore,
} from '../../src/documents/index.ts';
import { startS3Double, type S3Double } from '../doubles/s3.ts';

const BUCKET = 'deal-documents';
const ACCESS_KEY_ID = 'AKIADOUBLETEST';

let dataDir: string;
const doubles: S3Double[] = [];
const s3Stores: S3DocumentStore[] = [];

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-documents-'));
});
afterEach(async () => {
  for (const store of s3Stores.splice(0)) store.close();
  await Promise.all(doubles.splice(0).map((double) => double.close()));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

function filesystemStore(): FilesystemDocumentStore {
  const store = createDocumentStore(parseConfig({ DATA_DIR: dataDir }));
  expect(store).toBeInstanceOf(FilesystemDocumentStore);
  return store as FilesystemDocumentStore;
}

async function s3Store(options: { corruptUploads?: boolean; accessKeyId?: string } = {}) {
  const double = await startS3Double({
    bucket: BUCKET,
    accessKeyId: ACCESS_KEY_ID,
    corruptUploads: options.corruptUploads,
  });
  doubles.push(double);
  const store = createDocumentStore(
    parseConfig({
      DOCUMENT_STORE: 's3',
      S3_BUCKET: BUCKET,
      S3_ENDPOINT: double.endpoint,
      S3_REGION: 'eu-central-1',
      S3_ACCESS_KEY_ID: options.accessKeyId ?? ACCESS_KEY_ID,
      S3_SECRET_ACCESS_KEY: 'secret-of-the-double',
      S3_FORCE_PATH_STYLE: 'true',
    }),
  );
  expect(store).toBeInstanceOf(S3DocumentStore);
  s3Stores.push(store as S3DocumentStore);
  return { store, double };
}

function sampleDocument() {
  // Every byte value, so an encoding slip anywhere (utf-8, base64) would show.
  const bytes = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), Buffer.from(randomUUID())]);
  return { organizationId: randomUUID(), documentId: randomUUID(), bytes, contentType: 'application/pdf' };
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe.each([
  { name: 'filesystem', make: async (): Promise<DocumentStore> => filesystemStore() },
  { name: 's3', make: async (): Promise<DocumentStore> => (await s3Store()).store },
])('$name store', ({ make }) => {
  it('gives back the stored bytes with their size and SHA-256', async () => {
    const store = await make();
    const document = sampleDocument();
    const stored = await store.put(document);
    expect(stored).toEqual({
      key: `org/${document.organizationId}/${document.documentId}`,
      size: document.bytes.length,
      sha256: sha256(document.bytes),
    });
    expect((await store.get(stored.key)).equals(document.bytes)).toBe(true);
  });

  it('stores the same document twice, or at once, harmlessly', async () => {
    const store = await make();
    const document = sampleDocument();
    const results = [await store.put(document), ...(await Promise.all([store.put(document), store.put(document)]))];
    expect(new Set(results.map((result) => JSON.stringify(result))).size).toBe(1);
    expect((await store.get(results[0].key)).equals(document.bytes)).toBe(true);
  });

  it('refuses ids that are not UUIDs and keys outside the scheme', async () => {
    const store = await make();
    const document = sampleDocument();
    for (const bad of ['..', '../../etc', 'a/b', '', `${randomUUID()}/..`]) {
      await expect(store.put({ ...document, organizationId: bad })).rejects.toThrow(InvalidDocumentKeyError);
      await expect(store.put({ ...document, documentId: bad })).rejects.toThrow(InvalidDocumentKeyError);
    }
    for (const key of [
      'org/../../etc/passwd',
      `org/${randomUUID()}/../${randomUUID()}`,
      `/org/${randomUUID()}/${randomUUID()}`,
      'x',
    ]) {
      await expect(store.get(key)).rejects.toThrow(InvalidDocumentKeyError);
    }
  });

  it('says a missing document is not found', async () => {
    const store = await make();
    const key = `org/${randomUUID()}/${randomUUID()}`;
    await expect(store.get(key)).rejects.toThrow(DocumentNotFoundError);
  });

  it('removes a document, harmlessly when it is not there, and only keys of its scheme', async () => {
    const store = await make();
    const stored = await store.put(sampleDocument());
    const other = await store.put(sampleDocument());
    await store.remove(stored.key);
    await expect(store.get(stored.key)).rejects.toThrow(DocumentNotFoundError);
    await store.remove(stored.key);
    expect((await store.get(other.key)).length).toBeGreaterThan(0);
    await expect(store.remove(`org/${randomUUID()}/../${randomUUID()}`)).rejects.toThrow(InvalidDocumentKeyError);
  });
});

describe('filesystem store', () => {
  it('keeps documents under DATA_DIR/documents/org/<organization>/<document> and leaves no temporary file', async () => {
    const store = filesystemStore();
    expect(store.root).toBe(path.join(dataDir, 'documents'));
    const document = sampleDocument();
    await Promise.all([store.put(document), store.put(document), store.put({ ...document, documentId: randomUUID() })]);
    const directory = path.join(dataDir, 'documents', 'org', document.organizationId);
    const names = await readdir(directory);
    expect(names).toHaveLength(2);
    expect(names).toContain(document.documentId);
  });

  it('keeps documents readable by the service user alone: files 0600, directories 0700', async () => {
    const store = filesystemStore();
    const document = sampleDocument();
    await store.put(document);
    const file = path.join(store.root, 'org', document.organizationId, document.documentId);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700);
    expect((await stat(path.join(store.root, 'org'))).mode & 0o777).toBe(0o700);
  });

  it('leaves neither a document nor a temporary file when the write fails', async () => {
    const store = filesystemStore();
    const document = sampleDocument();
    // A non-empty directory under the document's name makes the final rename fail.
    const target = path.join(store.root, 'org', document.organizationId, document.documentId);
    await mkdir(path.join(target, 'occupied'), { recursive: true });
    await expect(store.put(document)).rejects.toThrow();
    expect(await readdir(path.dirname(target))).toEqual([document.documentId]);
  });

  it('accepts upper-case UUIDs under their one lower-case key', async () => {
    const store = filesystemStore();
    const document = sampleDocument();
    const stored = await store.put({ ...document, organizationId: document.organizationId.toUpperCase() });
    expect(stored.key).toBe(`org/${document.organizationId}/${document.documentId}`);
    expect((await store.get(stored.key)).equals(document.bytes)).toBe(true);
  });
});

describe('S3 store', () => {
  it('signs with the configured credentials and sends the SHA-256 for S3 to verify', async () => {
    const { store, double } = await s3Store();
    const document = sampleDocument();
    const stored = await store.put(document);
    const put = double.requests.find((request) => request.method === 'PUT')!;
    expect(put.path).toBe(`/${BUCKET}/${stored.key}`); // path style, our key scheme
    expect(put.headers.authorization).toMatch(
      new RegExp(`^AWS4-HMAC-SHA256 Credential=${ACCESS_KEY_ID}/\\d{8}/eu-central-1/s3/`),
    );
    expect(put.headers['x-amz-checksum-sha256']).toBe(createHash('sha256').update(document.bytes).digest('base64'));
    expect(put.headers['content-type']).toBe('application/pdf');
    expect(put.headers['content-length']).toBe(String(document.bytes.length));
    expect(put.body.equals(document.bytes)).toBe(true);
    expect(double.objects.get(stored.key)?.body.equals(document.bytes)).toBe(true);
  });

  it('fails when S3 refuses the bytes that arrived as not matching the checksum', async () => {
    const { store, double } = await s3Store({ corruptUploads: true });
    const document = sampleDocument();
    await expect(store.put(document)).rejects.toMatchObject({ name: 'BadDigest', $metadata: { httpStatusCode: 400 } });
    expect(double.objects.size).toBe(0);
  });

  it('fails when the stored bytes no longer match their checksum', async () => {
    const { store, double } = await s3Store();
    const stored = await store.put(sampleDocument());
    const object = double.objects.get(stored.key)!;
    object.body = Buffer.from(object.body);
    object.body[10] = object.body[10] ^ 0xff;
    await expect(store.get(stored.key)).rejects.toThrow(/checksum/i);
  });

  it('fails with credentials S3 does not know', async () => {
    const { store, double } = await s3Store({ accessKeyId: 'AKIAUNKNOWN' });
    await expect(store.put(sampleDocument())).rejects.toMatchObject({
      name: 'InvalidAccessKeyId',
      $metadata: { httpStatusCode: 403 },
    });
    expect(double.objects.size).toBe(0);
  });
});

describe('createDocumentStore', () => {
  it('chooses the filesystem by default and S3 when DOCUMENT_STORE=s3', () => {
    expect(createDocumentStore(parseConfig({ DATA_DIR: dataDir }))).toBeInstanceOf(FilesystemDocumentStore);
    const store = createDocumentStore(parseConfig({ DOCUMENT_STORE: 's3', S3_BUCKET: BUCKET }));
    expect(store).toBeInstanceOf(S3DocumentStore);
    expect((store as S3DocumentStore).bucket).toBe(BUCKET);
    (store as S3DocumentStore).close();
  });

  it('names S3_BUCKET when S3 is chosen without it', () => {
    expect(() => createDocumentStore(parseConfig({ DOCUMENT_STORE: 's3' }))).toThrow(/S3_BUCKET/);
  });

  it('names the missing half of an S3 key pair', () => {
    const env = { DOCUMENT_STORE: 's3', S3_BUCKET: BUCKET };
    expect(() => createDocumentStore(parseConfig({ ...env, S3_ACCESS_KEY_ID: 'AK' }))).toThrow(
      /set S3_SECRET_ACCESS_KEY/,
    );
    expect(() => createDocumentStore(parseConfig({ ...env, S3_SECRET_ACCESS_KEY: 'SK' }))).toThrow(
      /set S3_ACCESS_KEY_ID/,
    );
  });
});
