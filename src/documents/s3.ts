// Documents in an S3-compatible bucket, under the same keys as on the filesystem. Each upload carries its SHA-256,
// so S3 refuses bytes damaged on the way; reads ask for the stored checksum, so the SDK verifies them too.
import { createHash } from 'node:crypto';
import { DeleteObjectCommand, GetObjectCommand, NoSuchKey, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { DocumentStore, StoredObject } from './store.ts';
import { DocumentNotFoundError, documentKey, parseDocumentKey } from './keys.ts';

export interface S3StoreOptions {
  bucket: string;
  region: string;
  /** For S3-compatible services (MinIO, Yandex Object Storage…); AWS when absent. */
  endpoint?: string;
  forcePathStyle?: boolean;
  /** The SDK's default chain (environment, instance role…) when absent. */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

export class S3DocumentStore implements DocumentStore {
  readonly bucket: string;
  readonly client: S3Client;

  constructor(options: S3StoreOptions) {
    this.bucket = options.bucket;
    this.client = new S3Client({
      region: options.region,
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle,
      credentials: options.credentials,
    });
  }

  async put(input: {
    organizationId: string;
    documentId: string;
    bytes: Buffer;
    contentType: string;
  }): Promise<StoredObject> {
    const key = documentKey(input.organizationId, input.documentId);
    const digest = createHash('sha256').update(input.bytes).digest();
    // A PUT replaces the object whole, so storing the same document again is harmless.
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: input.bytes,
        ContentType: input.contentType,
        ContentLength: input.bytes.length,
        ChecksumSHA256: digest.toString('base64'),
      }),
    );
    return { key, size: input.bytes.length, sha256: digest.toString('hex') };
  }

  async get(key: string): Promise<Buffer> {
    parseDocumentKey(key);
    try {
      const response = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: key, ChecksumMode: 'ENABLED' }),
      );
      return Buffer.from(await response.Body!.transformToByteArray());
    } catch (error) {
      if (error instanceof NoSuchKey) throw new DocumentNotFoundError(key);
      throw error;
    }
  }

  async remove(key: string): Promise<void> {
    parseDocumentKey(key);
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key })); // S3 answers 204 for a missing key too
  }

  /** Closes the client's connections. */
  close(): void {
    this.client.destroy();
  }
}
