// Demo credentials for a fresh `npm start`: made once, kept in DATA_DIR (the database stores only hashes), and
// checked on every start so a reset database gets new ones.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Db } from '../db.ts';
import { createAdminToken, isAdminToken } from '../admin/auth.ts';
import { createMarketplace, marketplaceByKey } from '../marketplaces/marketplaces.ts';
import { accountIdForKey, issueDataKey } from '../data-api/keys.ts';

export interface DemoCredentials {
  admin_token: string;
  marketplace: { id: string; name: string; mode: 'sandbox'; secret_key: string; public_key: string };
  data_key: { key: string; account_id: string; tariff: 'free'; email: string };
}

const DEMO_DATA_EMAIL = 'demo-data@example.com';

export async function ensureDemoCredentials(db: Db, dataDir: string): Promise<DemoCredentials> {
  const file = path.join(dataDir, 'demo-credentials.json');
  const saved = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Partial<DemoCredentials>) : {};

  const admin_token =
    saved.admin_token && (await isAdminToken(db, saved.admin_token, undefined))
      ? saved.admin_token
      : await createAdminToken(db, 'demo (npm start)');

  let marketplace = saved.marketplace;
  if (!marketplace || !(await marketplaceByKey(db, marketplace.secret_key, 'secret'))) {
    const created = await createMarketplace(db, { name: 'Demo marketplace', mode: 'sandbox' });
    marketplace = {
      id: created.marketplace.id,
      name: created.marketplace.name,
      mode: 'sandbox',
      secret_key: created.secretKey,
      public_key: created.publicKey,
    };
  }

  let data_key = saved.data_key;
  if (!data_key || !(await accountIdForKey(db, data_key.key))) {
    const issued = await issueDataKey(db, { email: DEMO_DATA_EMAIL, tariff: 'free' });
    data_key = { key: issued.key, account_id: issued.account_id, tariff: 'free', email: DEMO_DATA_EMAIL };
  }

  const credentials: DemoCredentials = { admin_token, marketplace, data_key };
  writeFileSync(file, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  return credentials;
}
