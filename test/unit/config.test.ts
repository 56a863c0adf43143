import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { ConfigError, parseConfig } from '../../src/config.ts';

describe('configuration', () => {
  it('has the documented defaults and embeds PostgreSQL and Temporal when nothing points elsewhere', () => {
    const config = parseConfig({});
    expect(config).toMatchObject({
      HOST: '127.0.0.1',
      PORT: 3000,
      DATA_PORT: 3100,
      BASE_URL: 'http://127.0.0.1:3000',
      MCP_URL: 'http://127.0.0.1:3100',
      DATA_DIR: path.resolve('./.data'),
      TEMPORAL_ADDRESS: '127.0.0.1:7233',
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_PORT: 7233,
      TEMPORAL_UI_PORT: 8233,
      SSO_CODE_TTL_SECONDS: 300,
      WEBHOOK_RETRY_BASE_SECONDS: 30,
      WEBHOOK_ALLOW_LOOPBACK: false,
      embeddedPostgres: true,
      embeddedTemporal: true,
    });
    expect(config.SMTP_URL).toBeUndefined();
    expect(config.SVC_BOOTSTRAP_ADMIN_TOKEN).toBeUndefined();
  });

  it('derives public addresses from HOST and the ports, and trims a trailing slash from given ones', () => {
    expect(parseConfig({ HOST: 'localhost', PORT: '8080' }).BASE_URL).toBe('http://localhost:8080');
    expect(parseConfig({ BASE_URL: 'https://svc.example/' }).BASE_URL).toBe('https://svc.example');
    expect(parseConfig({ HOST: '0.0.0.0', DATA_PORT: '9000' }).MCP_URL).toBe('http://127.0.0.1:9000');
    // The console's links into the Temporal Web UI follow its port unless an address is given.
    expect(parseConfig({}).TEMPORAL_UI_URL).toBe('http://127.0.0.1:8233');
    expect(parseConfig({ TEMPORAL_UI_PORT: '9233' }).TEMPORAL_UI_URL).toBe('http://127.0.0.1:9233');
    expect(parseConfig({ TEMPORAL_UI_URL: 'https://temporal.example/' }).TEMPORAL_UI_URL).toBe(
      'https://temporal.example',
    );
  });

  it('uses external services when their addresses are set', () => {
    const config = parseConfig({ DATABASE_URL: 'postgres://u:p@db:5432/svc', TEMPORAL_ADDRESS: 'temporal:7233' });
    expect(config.embeddedPostgres).toBe(false);
    expect(config.embeddedTemporal).toBe(false);
    expect(config.TEMPORAL_ADDRESS).toBe('temporal:7233');
  });

  it('reads WEBHOOK_ALLOW_LOOPBACK as a boolean', () => {
    expect(parseConfig({ WEBHOOK_ALLOW_LOOPBACK: 'true' }).WEBHOOK_ALLOW_LOOPBACK).toBe(true);
    expect(parseConfig({ WEBHOOK_ALLOW_LOOPBACK: 'false' }).WEBHOOK_ALLOW_LOOPBACK).toBe(false);
  });

  it('treats blank values as unset', () => {
    const config = parseConfig({ PORT: '', SMTP_URL: '' });
    expect(config.PORT).toBe(3000);
    expect(config.SMTP_URL).toBeUndefined();
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['DATA_PORT', '-1'],
    ['BASE_URL', 'not a url'],
    ['DATABASE_URL', 'mysql://x/y'],
    ['SSO_CODE_TTL_SECONDS', '0'],
    ['WEBHOOK_RETRY_BASE_SECONDS', 'soon'],
    ['WEBHOOK_ALLOW_LOOPBACK', 'yes'],
    ['SMTP_URL', 'http://mail'],
    ['SVC_MASTER_KEY', 'short'],
    ['SVC_BOOTSTRAP_ADMIN_TOKEN', 'short'],
    ['LOG_LEVEL', 'loud'],
  ])('stops with a message naming %s when it is %j', (name, value) => {
    expect(() => parseConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => parseConfig({ [name]: value })).toThrow(new RegExp(`^Invalid configuration:\\n  ${name}: `));
  });
});
