import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/log.ts';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, logger: createLogger('info', stream) };
}

describe('logs', () => {
  it('redact secrets at any of the first three levels of nesting', () => {
    const { lines, logger } = capture();
    logger.info(
      {
        password: 'hunter2-password',
        headers: { authorization: 'Bearer adm_topsecret', 'x-svc-key': 'mk_topsecret' },
        body: { nested: { client_secret: 'cs_topsecret' } },
        safe: 'visible',
      },
      'event',
    );
    const line = lines.join('');
    for (const secret of ['hunter2-password', 'adm_topsecret', 'mk_topsecret', 'cs_topsecret']) {
      expect(line).not.toContain(secret);
    }
    expect(JSON.parse(line)).toMatchObject({
      password: '[redacted]',
      headers: { authorization: '[redacted]', 'x-svc-key': '[redacted]' },
      body: { nested: { client_secret: '[redacted]' } },
      safe: 'visible',
    });
  });
});
