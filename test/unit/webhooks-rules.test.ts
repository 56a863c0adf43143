// The pure rules under webhook delivery: which addresses are public or the loopback, how long to wait before a retry,
// and that our Standard Webhooks signature is the one the reference library computes.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { isLoopbackAddress, isPublicAddress } from '../../src/webhooks/ssrf.ts';
import { MAX_RETRY_DELAY_MS, parseRetryAfter, retryDelayMs } from '../../src/webhooks/delivery.ts';
import { newWebhookSecret, webhookHeaders } from '../../src/webhooks/signing.ts';

describe('isPublicAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '100.127.255.255',
    '0.0.0.0',
    '0.1.2.3',
    '224.0.0.251',
    '239.1.1.1',
    '255.255.255.255',
    '192.0.2.1',
    '::',
    '::1',
    '[::1]',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    'fe80::1%eth0',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:192.168.1.1',
    '64:ff9b::a00:1',
    '2002:c0a8:101::1',
    // NAT64, well-known and local-use, even towards a public IPv4 address: the translator picks the destination.
    '64:ff9b::808:808',
    '64:ff9b::8.8.8.8',
    '64:ff9b:1::808:808',
    '64:ff9b:1:ffff:ffff:ffff:ffff:ffff',
    // Teredo and the rest of the IETF protocol assignments, the newer documentation prefix, segment routing SIDs.
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '2001:2::1',
    '3fff::1',
    '5f00::1',
    'not-an-ip',
    '',
  ])('refuses %s', (ip) => {
    expect(isPublicAddress(ip)).toBe(false);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '100.128.0.1',
    '172.32.0.1',
    '11.0.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '2002:808:808::1',
    '2001:4860:4860::8888',
    '64:ff9c::1',
  ])('allows %s', (ip) => {
    expect(isPublicAddress(ip)).toBe(true);
  });
});

describe('isLoopbackAddress', () => {
  it.each(['127.0.0.1', '127.255.255.254', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', '::ffff:7f00:1'])(
    '%s is the loopback',
    (ip) => {
      expect(isLoopbackAddress(ip)).toBe(true);
    },
  );

  // What WEBHOOK_ALLOW_LOOPBACK must not open: the rest of the special-use space, and NAT64 towards 127.0.0.1.
  it.each([
    '128.0.0.1',
    '0.0.0.0',
    '10.0.0.1',
    '169.254.169.254',
    '::',
    '::2',
    'fe80::1',
    'fd00::1',
    '64:ff9b::7f00:1',
    '::127.0.0.1',
    'localhost',
    '',
  ])('%s is not', (ip) => {
    expect(isLoopbackAddress(ip)).toBe(false);
  });
});

describe('retryDelayMs', () => {
  it('doubles from the base with ±20% jitter', () => {
    for (let i = 0; i < 200; i += 1) {
      const first = retryDelayMs(1, 30);
      expect(first).toBeGreaterThanOrEqual(24_000);
      expect(first).toBeLessThanOrEqual(36_000);
      const fourth = retryDelayMs(4, 30);
      expect(fourth).toBeGreaterThanOrEqual(192_000);
      expect(fourth).toBeLessThanOrEqual(288_000);
    }
    const spread = new Set(Array.from({ length: 50 }, () => retryDelayMs(1, 30)));
    expect(spread.size).toBeGreaterThan(10); // jitter, not a fixed delay
  });

  it('never waits more than 12 hours', () => {
    expect(retryDelayMs(40, 30)).toBe(MAX_RETRY_DELAY_MS);
    expect(retryDelayMs(1, 30, { httpStatus: 503, retryAfter: String(48 * 3600) })).toBe(MAX_RETRY_DELAY_MS);
  });

  it('honours Retry-After in seconds or as an HTTP date on 429 and 503 only', () => {
    expect(retryDelayMs(5, 30, { httpStatus: 429, retryAfter: '7' })).toBe(7000);
    expect(retryDelayMs(5, 30, { httpStatus: 503, retryAfter: ' 120 ' })).toBe(120_000);
    const inAMinute = new Date(Date.now() + 60_000).toUTCString();
    const fromDate = retryDelayMs(1, 30, { httpStatus: 503, retryAfter: inAMinute });
    expect(fromDate).toBeGreaterThan(55_000);
    expect(fromDate).toBeLessThanOrEqual(60_000);
    // Other statuses and unreadable values fall back to the exponential schedule.
    expect(retryDelayMs(1, 30, { httpStatus: 500, retryAfter: '7' })).toBeGreaterThanOrEqual(24_000);
    expect(retryDelayMs(1, 30, { httpStatus: 503, retryAfter: 'soon' })).toBeGreaterThanOrEqual(24_000);
  });

  it('reads past dates as no wait', () => {
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', Date.now())).toBe(0);
    expect(parseRetryAfter('0', Date.now())).toBe(0);
    expect(parseRetryAfter('-5', Date.now())).toBeUndefined();
  });
});

describe('webhookHeaders', () => {
  it('computes the Standard Webhooks signature the reference library computes', () => {
    const secret = newWebhookSecret();
    const body = Buffer.from('{"event":"deal.paid","title":"Ünïcode ✓"}', 'utf8');
    const headers = webhookHeaders({
      body,
      secret,
      event: 'deal.paid',
      eventId: 'evt_1',
      deliveryId: 'dlv_1',
      timestamp: 1_700_000_000,
    });
    expect(headers['webhook-signature']).toBe(
      new Webhook(secret).sign('evt_1', new Date(1_700_000_000_000), body.toString('utf8')),
    );
    // X-Svc-Signature: keyed with the whole whsec_ string as UTF-8, not with the decoded bytes.
    expect(headers['X-Svc-Signature']).toBe(
      createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex'),
    );
    expect(headers).toMatchObject({
      'X-Svc-Event': 'deal.paid',
      'X-Svc-Delivery': 'dlv_1',
      'webhook-id': 'evt_1',
      'webhook-timestamp': '1700000000',
    });
    expect(headers).not.toHaveProperty('X-Svc-Signature-Previous');
  });

  it('adds the previous secret’s signatures during a rotation: second in webhook-signature, X-Svc-Signature-Previous', () => {
    const [secret, previousSecret] = [newWebhookSecret(), newWebhookSecret()];
    const body = Buffer.from('{"event":"deal.paid"}', 'utf8');
    const input = { body, secret, event: 'deal.paid', eventId: 'evt_2', deliveryId: 'dlv_2', timestamp: 1_700_000_000 };
    const headers = webhookHeaders({ ...input, previousSecret });
    const at = new Date(1_700_000_000_000);
    expect(headers['webhook-signature']).toBe(
      `${new Webhook(secret).sign('evt_2', at, body.toString('utf8'))} ${new Webhook(previousSecret).sign('evt_2', at, body.toString('utf8'))}`,
    );
    expect(headers['X-Svc-Signature']).toBe(webhookHeaders(input)['X-Svc-Signature']);
    expect(headers['X-Svc-Signature-Previous']).toBe(
      createHmac('sha256', Buffer.from(previousSecret, 'utf8')).update(body).digest('hex'),
    );
  });
});
