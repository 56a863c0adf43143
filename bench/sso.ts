// bench/sso: against a running stack (`npm start` in another terminal), measures authorization code exchanges per
// second with p50/p99 at 1, 10 and 50 concurrent: the simplified JSON exchange (POST /sso/token, answers the profile)
// and the OpenID Connect token endpoint (also records an access token and signs an ID token); and, for scale, the
// authorize step that issues the codes.
// Usage: npm run bench:sso [-- --codes 2000]
// Reads the admin token from DATA_DIR/demo-credentials.json (or SVC_ADMIN_TOKEN); BASE_URL as for the service.
import { randomUUID } from 'node:crypto';
import { parseConfig } from '../src/config.ts';
import { line, runConcurrently, benchAdminToken, numberFlag } from './stats.ts';

const config = parseConfig();
const perPhase = numberFlag('codes', 2000);
const adminToken = benchAdminToken(config.DATA_DIR);
const base = config.BASE_URL;
const runId = randomUUID().slice(0, 8);
const redirectUri = 'https://bench-client.example.com/callback';

async function call(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<any> {
  const response = await fetch(`${base}${url}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${url}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** A user with a password, made the way users are: a deal invites the buyer, who sets a password from the mail. */
async function signedInUser(admin: Record<string, string>): Promise<string> {
  const marketplace = await call('POST', '/admin/marketplaces', { name: `sso bench ${runId}`, mode: 'sandbox' }, admin);
  const email = `sso-bench-${runId}@example.com`;
  await call(
    'POST',
    '/api/mkt/deals',
    { external_id: `sso-${runId}`, buyer_email: email, amount: 1 },
    { 'X-Svc-Key': marketplace.secret_key },
  );
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const { items } = await call('GET', `/admin/mail?to=${encodeURIComponent(email)}`, undefined, admin);
    const token = items[0]?.text.match(/invite\?token=(\S+)/)?.[1];
    if (token) return (await call('POST', '/cabinet/invite/accept', { token, password: 'bench password' })).token;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('No invitation mail for the bench user; is the worker running?');
}

async function issueCode(clientId: string, cabinetToken: string): Promise<string> {
  const query = new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, state: 'bench' });
  const response = await fetch(`${base}/sso/authorize?${query}`, {
    redirect: 'manual',
    headers: { Authorization: `Bearer ${cabinetToken}` },
  });
  const code = new URL(response.headers.get('location') ?? 'x:/').searchParams.get('code');
  if (response.status !== 302 || !code) throw new Error(`authorize: ${response.status} ${await response.text()}`);
  return code;
}

async function main() {
  const admin = { Authorization: `Bearer ${adminToken}` };
  const client = await call(
    'POST',
    '/admin/sso/clients',
    { client_id: `bench-${runId}`, name: 'Bench client', redirect_uris: redirectUri },
    admin,
  );
  const cabinetToken = await signedInUser(admin);
  const basic = `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`;
  console.log(`bench/sso against ${base}, run ${runId}, ${perPhase} codes per phase\n`);

  const exchanges = {
    'POST /sso/token (JSON, profile)': (code: string) =>
      call('POST', '/sso/token', {
        client_id: client.client_id,
        client_secret: client.client_secret,
        code,
        redirect_uri: redirectUri,
      }),
    'POST /sso/oidc/token (id_token)': async (code: string) => {
      const response = await fetch(`${base}/sso/oidc/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: basic },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri }).toString(),
      });
      if (response.status !== 200) throw new Error(`oidc token: ${response.status} ${await response.text()}`);
      await response.arrayBuffer();
    },
  };

  for (const concurrency of [1, 10, 50]) {
    console.log(`${concurrency} concurrent`);
    for (const [label, exchange] of Object.entries(exchanges)) {
      // Codes live SSO_CODE_TTL_SECONDS (5 minutes by default): issue a fresh batch right before each phase.
      const codes: string[] = [];
      const authorize = await runConcurrently(perPhase, concurrency, async () => {
        codes.push(await issueCode(client.client_id, cabinetToken));
      });
      if (label.includes('JSON')) console.log(line('  GET /sso/authorize (issue a code)', authorize));
      const summary = await runConcurrently(codes.length, concurrency, (index) =>
        exchange(codes[index]).then(() => undefined),
      );
      console.log(line(`  ${label}`, summary));
    }
    console.log('');
  }
}

await main();
