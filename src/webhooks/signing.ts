// Webhook secrets and signatures. Two schemes over the same stored bytes: the spec's X-Svc-Signature (hex HMAC of the
// body, keyed with the whole whsec_ string) and Standard Webhooks (so receivers can use its libraries and reject
// replays by timestamp).
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
  event: string;
  eventId: string;
  deliveryId: string;
  /** Unix seconds of this attempt. */
  timestamp: number;
}

/** Every header of one delivery attempt. */
export function webhookHeaders(input: SignInput): Record<string, string> {
  const { body, secret, eventId, timestamp } = input;
  const svcSignature = createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex');
  const standardKey = Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64');
  const standardSignature = createHmac('sha256', standardKey)
    .update(Buffer.concat([Buffer.from(`${eventId}.${timestamp}.`, 'utf8'), body]))
    .digest('base64');
  return {
    'Content-Type': 'application/json',
    'User-Agent': WEBHOOK_USER_AGENT,
    'X-Svc-Signature': svcSignature,
    'X-Svc-Event': input.event,
    'X-Svc-Delivery': input.deliveryId,
    'webhook-id': eventId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': `v1,${standardSignature}`,
  };
}
