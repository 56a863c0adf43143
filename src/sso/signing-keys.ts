// ID token signing keys: RS256 key pairs made with jose, persisted with the private half sealed by the master key, so
// every server instance signs with the same key and a restart keeps it. Rotation adds a key that is published in the
// JWKS at once and signs only from its not_before, so clients holding a cached JWKS can fetch it before they meet it;
// a replaced key stays published for a day so that ID tokens it signed still verify.
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import { inTransaction, type Db } from '../db.ts';
import { decryptSecret, encryptSecret } from '../secrets.ts';

export const SIGNING_ALG = 'RS256';
const CACHE_MS = 60_000;

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  notBefore: number;
}

// Per pool, so that several servers in one process (tests) each see their own database.
const cache = new WeakMap<Db, { keys: SigningKey[]; until: number }>();

/** The key to sign with now: the newest whose not_before has passed. Made on first use. */
export async function currentSigningKey(db: Db, masterKey: Buffer): Promise<SigningKey> {
  let cached = cache.get(db);
  if (!cached || cached.until < Date.now()) cached = await reload(db, masterKey);
  let current = currentOf(cached.keys);
  if (!current) {
    await createFirstKey(db, masterKey);
    const keys = (await reload(db, masterKey)).keys;
    // The database clock may run a little ahead of ours: then its newest key is the one just made.
    current = currentOf(keys) ?? keys[0];
  }
  if (!current) throw new Error('no SSO signing key could be made');
  return current;
}

const currentOf = (keys: SigningKey[]) => keys.filter((key) => key.notBefore <= Date.now()).at(-1);

async function reload(db: Db, masterKey: Buffer) {
  const entry = { keys: await loadKeys(db, masterKey), until: Date.now() + CACHE_MS };
  cache.set(db, entry);
  return entry;
}

/** The public keys for the JWKS: upcoming, current, and those replaced less than a day ago. */
export async function publishedKeys(db: Db): Promise<JWK[]> {
  const result = await db.query<{ public_jwk: JWK }>(
    `SELECT public_jwk FROM (
       SELECT public_jwk, not_before, lead(not_before) OVER (ORDER BY not_before, created_at) AS replaced_at FROM sso_signing_keys
     ) k WHERE replaced_at IS NULL OR replaced_at > now() - interval '1 day' ORDER BY not_before DESC`,
  );
  return result.rows.map((row) => row.public_jwk);
}

/** Adds a new key that starts signing after `activateAfterSeconds`; answers its kid and when it signs. */
export async function rotateSigningKey(
  db: Db,
  masterKey: Buffer,
  activateAfterSeconds: number,
): Promise<{ kid: string; not_before: string }> {
  const created = await insertKey(db, masterKey, activateAfterSeconds);
  cache.delete(db);
  return created;
}

async function createFirstKey(db: Db, masterKey: Buffer): Promise<void> {
  await inTransaction(db, async (client) => {
    // One key even when several servers start signing at the same moment.
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('sso_signing_keys'))`);
    const existing = await client.query('SELECT 1 FROM sso_signing_keys WHERE not_before <= now() LIMIT 1');
    if (existing.rowCount === 0) await insertKey(client, masterKey, 0);
  });
}

async function insertKey(db: Pick<Db, 'query'>, masterKey: Buffer, activateAfterSeconds: number) {
  const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { modulusLength: 2048, extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const sealed = encryptSecret(masterKey, JSON.stringify(await exportJWK(privateKey)));
  const result = await db.query<{ not_before: Date }>(
    `INSERT INTO sso_signing_keys (kid, alg, public_jwk, private_sealed, not_before)
     VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5)) RETURNING not_before`,
    [kid, SIGNING_ALG, { ...publicJwk, kid, alg: SIGNING_ALG, use: 'sig' }, sealed, activateAfterSeconds],
  );
  return { kid, not_before: result.rows[0].not_before.toISOString() };
}

async function loadKeys(db: Db, masterKey: Buffer): Promise<SigningKey[]> {
  // The current key and upcoming ones; keys already replaced never sign again.
  const result = await db.query<{ kid: string; private_sealed: string; not_before: Date }>(
    `SELECT kid, private_sealed, not_before FROM (
       SELECT *, lead(not_before) OVER (ORDER BY not_before, created_at) AS replaced_at FROM sso_signing_keys
     ) k WHERE replaced_at IS NULL OR replaced_at > now() ORDER BY not_before, created_at`,
  );
  return Promise.all(
    result.rows.map(async (row) => ({
      kid: row.kid,
      privateKey: (await importJWK(
        JSON.parse(decryptSecret(masterKey, row.private_sealed)) as JWK,
        SIGNING_ALG,
      )) as CryptoKey,
      notBefore: row.not_before.getTime(),
    })),
  );
}
