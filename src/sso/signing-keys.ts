// SSO signing keys (ID tokens, JWT access tokens, logout tokens): RS256 key pairs made with jose, persisted with the
// private half sealed by the master key, so every server instance signs with the same key and a restart keeps it.
// Rotation overlaps (docs/decisions/0023-jwt-access-tokens-and-key-rotation.md): a new key is published in the JWKS at
// once and signs only from its not_before, so clients holding a cached JWKS can fetch it before they meet it; the key it
// replaces stays published until every token it signed has expired (retires_at), then is retired: gone from the JWKS,
// so its tokens no longer verify, and its private half erased.
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import { recordAudit } from '../admin/audit.ts';
import type { Config } from '../config.ts';
import { inTransaction, type Db, type DbClient } from '../db.ts';
import { decryptSecret, encryptSecret } from '../secrets.ts';

export const SIGNING_ALG = 'RS256';
const CACHE_MS = 60_000;
/**
 * Clock skew a verifier may allow past a token's exp: a replaced key stays published that much longer. It also covers
 * the logout tokens (src/sso/backchannel.ts), which live 120 s.
 */
const SKEW_SECONDS = 300;
/** The automatic rotation's audit actor. */
export const SYSTEM_ACTOR = 'system';

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  notBefore: number;
}

/** When keys turn over, from the configuration. */
export interface RotationPolicy {
  /** How long a new key is published before it signs. */
  publishSeconds: number;
  /** How long a replaced key stays published after its successor starts signing: the longest token it signed. */
  overlapSeconds: number;
  /** The age of the newest key after which a new one is made by itself (0: only by an operator). */
  maxAgeSeconds: number;
}

export function rotationPolicy(
  config: Pick<
    Config,
    'SSO_ACCESS_TOKEN_TTL_SECONDS' | 'SSO_SIGNING_KEY_PUBLISH_SECONDS' | 'SSO_SIGNING_KEY_MAX_AGE_SECONDS'
  >,
): RotationPolicy {
  return {
    publishSeconds: config.SSO_SIGNING_KEY_PUBLISH_SECONDS,
    overlapSeconds: config.SSO_ACCESS_TOKEN_TTL_SECONDS + SKEW_SECONDS,
    maxAgeSeconds: config.SSO_SIGNING_KEY_MAX_AGE_SECONDS,
  };
}

// Per pool, so that several servers in one process (tests) each see their own database.
const cache = new WeakMap<Db, { keys: SigningKey[]; until: number }>();

/**
 * The key to sign with now: the newest whose not_before has passed. Made on first use. With a policy, each reload of
 * the cache (the first signing after a start, then at most each minute) also rotates a key older than its maximum age.
 */
export async function currentSigningKey(db: Db, masterKey: Buffer, policy?: RotationPolicy): Promise<SigningKey> {
  let cached = cache.get(db);
  if (!cached || cached.until < Date.now()) {
    if (policy) await rotateIfDue(db, masterKey, policy);
    cached = await reload(db, masterKey);
  }
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

/** The public keys for the JWKS: upcoming, current, and replaced ones until they retire; newest first. */
export async function publishedKeys(db: Pick<Db, 'query'>): Promise<JWK[]> {
  const result = await db.query<{ public_jwk: JWK }>(
    `SELECT public_jwk FROM sso_signing_keys WHERE retires_at IS NULL OR retires_at > now()
      ORDER BY not_before DESC, created_at DESC`,
  );
  return result.rows.map((row) => row.public_jwk);
}

export interface SigningKeyState {
  kid: string;
  not_before: string;
  created_at: string;
  retires_at: string | null;
  /** upcoming: published, not signing yet; active: signing; replaced: published until retires_at; retired. */
  state: 'upcoming' | 'active' | 'replaced' | 'retired';
}

/** Every key with its state, newest first, for the console. */
export async function listSigningKeys(db: Pick<Db, 'query'>): Promise<SigningKeyState[]> {
  const result = await db.query<{
    kid: string;
    not_before: Date;
    created_at: Date;
    retires_at: Date | null;
    state: SigningKeyState['state'];
  }>(
    `SELECT kid, not_before, created_at, retires_at,
            CASE WHEN retires_at <= now() THEN 'retired' WHEN not_before > now() THEN 'upcoming'
                 WHEN retires_at IS NOT NULL AND EXISTS (
                   SELECT 1 FROM sso_signing_keys n WHERE n.not_before > k.not_before AND n.not_before <= now()
                 ) THEN 'replaced' ELSE 'active' END AS state
       FROM sso_signing_keys k ORDER BY not_before DESC, created_at DESC`,
  );
  return result.rows.map((row) => ({
    kid: row.kid,
    not_before: row.not_before.toISOString(),
    created_at: row.created_at.toISOString(),
    retires_at: row.retires_at?.toISOString() ?? null,
    state: row.state,
  }));
}

export interface Rotated {
  kid: string;
  not_before: string;
  /** The keys it replaces, with when each leaves the JWKS. */
  replaced: { kid: string; retires_at: string }[];
}

/**
 * Adds a new key that signs after `activateAfterSeconds`; every key not yet replaced is replaced from then and retires
 * `overlapSeconds` later. Retires the keys whose time has come. One rotation at a time (an advisory lock).
 */
export async function rotateSigningKey(
  db: Db,
  masterKey: Buffer,
  options: { activateAfterSeconds: number; overlapSeconds: number },
): Promise<Rotated> {
  const rotated = await inTransaction(db, async (client) => {
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('sso_signing_keys'))`);
    return rotateLocked(client, masterKey, options);
  });
  cache.delete(db);
  return rotated;
}

async function rotateLocked(
  client: DbClient,
  masterKey: Buffer,
  options: { activateAfterSeconds: number; overlapSeconds: number },
): Promise<Rotated> {
  const created = await insertKey(client, masterKey, options.activateAfterSeconds);
  const replaced = await client.query<{ kid: string; retires_at: Date }>(
    `UPDATE sso_signing_keys SET retires_at = $2::timestamptz + make_interval(secs => $3)
      WHERE retires_at IS NULL AND kid <> $1 RETURNING kid, retires_at`,
    [created.kid, created.not_before, options.overlapSeconds],
  );
  await retireExpiredKeys(client);
  return {
    ...created,
    replaced: replaced.rows.map((row) => ({ kid: row.kid, retires_at: row.retires_at.toISOString() })),
  };
}

/**
 * The automatic rotation: when the newest key is older than the policy's maximum age, a new one (published for
 * publishSeconds before it signs), audited as the system's. Also erases the private halves of retired keys.
 */
export async function rotateIfDue(db: Db, masterKey: Buffer, policy: RotationPolicy): Promise<Rotated | undefined> {
  const rotated = await inTransaction(db, async (client) => {
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('sso_signing_keys'))`);
    await retireExpiredKeys(client);
    if (policy.maxAgeSeconds <= 0) return undefined;
    const due = await client.query(
      `SELECT 1 FROM sso_signing_keys HAVING max(created_at) < now() - make_interval(secs => $1)`,
      [policy.maxAgeSeconds],
    );
    if (due.rowCount === 0) return undefined;
    const made = await rotateLocked(client, masterKey, {
      activateAfterSeconds: policy.publishSeconds,
      overlapSeconds: policy.overlapSeconds,
    });
    await recordAudit(client, {
      actor: SYSTEM_ACTOR,
      action: 'rotateSsoSigningKeyAutomatically',
      object_type: 'sso_signing_key',
      object_id: made.kid,
      after: made,
    });
    return made;
  });
  if (rotated) cache.delete(db);
  return rotated;
}

/** A retired key's private half is of no use any more: erased. */
async function retireExpiredKeys(client: DbClient): Promise<void> {
  await client.query(
    'UPDATE sso_signing_keys SET private_sealed = NULL WHERE retires_at <= now() AND private_sealed IS NOT NULL',
  );
}

async function createFirstKey(db: Db, masterKey: Buffer): Promise<void> {
  await inTransaction(db, async (client) => {
    // One key even when several servers start signing at the same moment.
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('sso_signing_keys'))`);
    const existing = await client.query(
      'SELECT 1 FROM sso_signing_keys WHERE not_before <= now() AND (retires_at IS NULL OR retires_at > now()) LIMIT 1',
    );
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
        WHERE private_sealed IS NOT NULL AND (retires_at IS NULL OR retires_at > now())
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
