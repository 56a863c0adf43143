// A small S3 double: path-style PutObject, GetObject and DeleteObject over node:http, answering as S3 does (XML errors, ETag,
// checksums), so the real @aws-sdk/client-s3 runs against it unchanged. Tests only.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, randomUUID } from 'node:crypto';

export interface StoredS3Object {
  body: Buffer;
  contentType: string;
  /** Base64 SHA-256 sent with the upload, returned on reads that ask for it. */
  checksumSha256?: string;
}

export interface LoggedS3Request {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  status: number;
}

export interface S3DoubleOptions {
  bucket: string;
  accessKeyId: string;
  /** Flips one byte of every upload as it arrives, as a damaged network would. */
  corruptUploads?: boolean;
}

export interface S3Double {
  endpoint: string;
  /** The bucket's objects by key; tests may damage them. */
  objects: Map<string, StoredS3Object>;
  requests: LoggedS3Request[];
  close(): Promise<void>;
}

export async function startS3Double(options: S3DoubleOptions): Promise<S3Double> {
  const objects = new Map<string, StoredS3Object>();
  const requests: LoggedS3Request[] = [];

  const server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const url = new URL(request.url ?? '/', 'http://double');
    const [, bucket = '', ...rest] = url.pathname.split('/');
    const key = decodeURIComponent(rest.join('/'));
    const entry: LoggedS3Request = {
      method: request.method ?? '',
      path: url.pathname,
      headers: request.headers,
      body,
      status: 0,
    };
    requests.push(entry);

    const fail = (status: number, code: string, message: string) => {
      entry.status = status;
      response.writeHead(status, { 'Content-Type': 'application/xml' });
      response.end(
        `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message>` +
          `<Key>${key}</Key><RequestId>${randomUUID()}</RequestId></Error>`,
      );
    };

    const authorization = request.headers.authorization ?? '';
    if (!authorization.startsWith(`AWS4-HMAC-SHA256 Credential=${options.accessKeyId}/`)) {
      return fail(403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.');
    }
    if (bucket !== options.bucket) return fail(404, 'NoSuchBucket', 'The specified bucket does not exist');

    if (request.method === 'PUT') {
      const contentSha256 = String(request.headers['x-amz-content-sha256'] ?? '');
      // The SDK (3.1168) sends a Buffer body plainly; aws-chunked framing is refused so a change in the SDK shows here.
      if (
        contentSha256.startsWith('STREAMING-') ||
        /aws-chunked/.test(String(request.headers['content-encoding'] ?? ''))
      ) {
        return fail(501, 'NotImplemented', 'The S3 double does not decode aws-chunked uploads');
      }
      const received = options.corruptUploads && body.length > 0 ? flipFirstByte(body) : body;
      // The flexible checksum first: it is what S3 checks even for UNSIGNED-PAYLOAD uploads.
      const checksum = request.headers['x-amz-checksum-sha256'] as string | undefined;
      if (checksum !== undefined && checksum !== sha256(received, 'base64')) {
        return fail(400, 'BadDigest', 'The SHA256 you specified did not match the calculated checksum.');
      }
      if (contentSha256 && contentSha256 !== 'UNSIGNED-PAYLOAD' && contentSha256 !== sha256(received, 'hex')) {
        return fail(
          400,
          'XAmzContentSHA256Mismatch',
          "The provided 'x-amz-content-sha256' header does not match what was computed.",
        );
      }
      objects.set(key, {
        body: received,
        contentType: request.headers['content-type'] ?? 'application/octet-stream',
        checksumSha256: checksum,
      });
      entry.status = 200;
      response.writeHead(200, { ETag: etag(received), ...(checksum ? { 'x-amz-checksum-sha256': checksum } : {}) });
      return response.end();
    }

    if (request.method === 'GET') {
      const object = objects.get(key);
      if (!object) return fail(404, 'NoSuchKey', 'The specified key does not exist.');
      const withChecksum = request.headers['x-amz-checksum-mode'] === 'ENABLED' && object.checksumSha256;
      entry.status = 200;
      response.writeHead(200, {
        'Content-Type': object.contentType,
        'Content-Length': object.body.length,
        ETag: etag(object.body),
        ...(withChecksum
          ? { 'x-amz-checksum-sha256': object.checksumSha256, 'x-amz-checksum-type': 'FULL_OBJECT' }
          : {}),
      });
      return response.end(object.body);
    }

    if (request.method === 'DELETE') {
      // As S3 does: 204 whether or not the key was there.
      objects.delete(key);
      entry.status = 204;
      response.writeHead(204);
      return response.end();
    }

    return fail(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    objects,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections(); // the SDK keeps connections alive
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

function sha256(bytes: Buffer, encoding: 'hex' | 'base64'): string {
  return createHash('sha256').update(bytes).digest(encoding);
}

// S3's ETag of a single-part upload is the quoted MD5 of the bytes.
function etag(bytes: Buffer): string {
  return `"${createHash('md5').update(bytes).digest('hex')}"`;
}

function flipFirstByte(bytes: Buffer): Buffer {
  const copy = Buffer.from(bytes);
  copy[0] = copy[0] ^ 0xff;
  return copy;
}
