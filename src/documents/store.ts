// The buyer's cloud: where deal documents are stored, per organization. Bytes never travel through Temporal; the
// workflow records only the storage key. The filesystem under DATA_DIR by default, S3-compatible storage by config.

export interface StoredObject {
  key: string;
  size: number;
  /** Lowercase hex SHA-256 of the bytes. */
  sha256: string;
}

export interface DocumentStore {
  /** Stores the bytes under organization/document; storing the same document again is harmless. */
  put(input: { organizationId: string; documentId: string; bytes: Buffer; contentType: string }): Promise<StoredObject>;
  get(key: string): Promise<Buffer>;
  /** Deletes the document (one the deal refused); a document that is not there is no error. */
  remove(key: string): Promise<void>;
}
