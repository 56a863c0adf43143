// Webhook secrets and signatures (docs/decisions/0008-webhooks-fixed-bytes-ordered-per-deal.md). Two schemes over the
// same stored bytes: our own X-Svc-Signature (hex HMAC of the body, keyed with the whole whsec_ string) and Standard
// Webhooks (so receivers can use its libraries and reject replays by timestamp). While a rotated-out secret still
// signs, each scheme carries its signature too.
import { createHmac, randomBytes } from 'node:crypto';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
export const WEBHOOK_USER_AGENT = 'svc-webhooks/1.0';

/** `whsec_` and the base64 of 32 random bytes: the Standard Webhooks secret format. */
export function newWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

export interface SignInput {
  body: Buffer;
  secret: string;
  /** The secret a rotation replaced, while its overlap lasts. */
  previousSecret?: string;
  event: string;
  eventId: string;
  deliveryId: string;
  /** Unix seconds of this attempt. */
  timestamp: number;
}

/** Every header of one delivery attempt. */
export function webhookHeaders(input: SignInput): Record<string, string> {
  const { body, secret, previousSecret, eventId, timestamp } = input;
  const standardContent = Buffer.concat([Buffer.from(`${eventId}.${timestamp}.`, 'utf8'), body]);
  // Standard Webhooks' header is a space-separated list so that a receiver holding either secret verifies it.
  const standardSignatures = [secret, ...(previousSecret ? [previousSecret] : [])].map(
    (key) => `v1,${standardSignature(key, standardContent)}`,
  );
  return {
    'Content-Type': 'application/json',
    'User-Agent': WEBHOOK_USER_AGENT,
    'X-Svc-Signature': svcSignature(secret, body),
    ...(previousSecret ? { 'X-Svc-Signature-Previous': svcSignature(previousSecret, body) } : {}),
    'X-Svc-Event': input.event,
    'X-Svc-Delivery': input.deliveryId,
    'webhook-id': eventId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': standardSignatures.join(' '),
  };
}

/** X-Svc-Signature: keyed with the whole whsec_ string as UTF-8, lowercase hex. */
function svcSignature(secret: string, body: Buffer): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex');
}

/** Standard Webhooks: keyed with the bytes the base64 after whsec_ stands for, over `id.timestamp.body`, base64. */
function standardSignature(secret: string, content: Buffer): string {
  const key = Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64');
  return createHmac('sha256', key).update(content).digest('base64');
}
