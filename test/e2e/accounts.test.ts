// Users (svc ID), personal organizations, memberships and password hashing, against the real PostgreSQL.
import { afterAll, describe, expect, it } from 'vitest';
import { createDb } from '../../src/db.ts';
import { ensureUser, findUserByEmail, personalOrganization, setPassword } from '../../src/accounts/users.ts';
import { hashPassword, verifyPassword } from '../../src/accounts/passwords.ts';
import { testConfig, uniqueEmail, UUID_PATTERN } from '../helpers.ts';

const db = createDb(testConfig().DATABASE_URL!);
afterAll(() => db.end());

describe('accounts', () => {
  it('gives a new user a UUID svc ID and a personal organization it owns', async () => {
    const email = uniqueEmail('buyer');
    const { user, created } = await ensureUser(db, { email, name: 'Anna Buyer' });
    expect(created).toBe(true);
    expect(user.id).toMatch(UUID_PATTERN);
    const org = await personalOrganization(db, user.id);
    expect(org).toMatchObject({ name: 'Anna Buyer', personal: true });
    const membership = await db.query('SELECT role FROM memberships WHERE user_id = $1 AND organization_id = $2', [
      user.id,
      org!.id,
    ]);
    expect(membership.rows).toEqual([{ role: 'owner' }]);
  });

  it('treats e-mail addresses case-insensitively and keeps the first user', async () => {
    const email = uniqueEmail('Case');
    const first = await ensureUser(db, { email });
    const again = await ensureUser(db, { email: email.toUpperCase(), name: 'Other' });
    expect(again).toEqual({ user: first.user, created: false });
    expect((await findUserByEmail(db, email.toLowerCase()))?.id).toBe(first.user.id);
    await expect(db.query('INSERT INTO users (email) VALUES ($1)', [email.toUpperCase()])).rejects.toMatchObject({
      code: '23505',
    });
  });

  it('makes exactly one user and one personal organization under 20 concurrent first requests', async () => {
    const email = uniqueEmail('race');
    const results = await Promise.all(Array.from({ length: 20 }, () => ensureUser(db, { email })));
    expect(new Set(results.map((result) => result.user.id)).size).toBe(1);
    expect(results.filter((result) => result.created)).toHaveLength(1);
    const orgs = await db.query('SELECT count(*) FROM organizations WHERE owner_id = $1', [results[0].user.id]);
    expect(orgs.rows[0].count).toBe(1);
  });

  it('stores passwords as argon2id hashes and verifies them', async () => {
    const hash = await hashPassword('correct horse battery staple');
    expect(hash).toMatch(/^\$argon2id\$/);
    expect(await verifyPassword(hash, 'correct horse battery staple')).toBe(true);
    expect(await verifyPassword(hash, 'wrong')).toBe(false);
    expect(await verifyPassword(null, 'anything')).toBe(false);

    const { user } = await ensureUser(db, { email: uniqueEmail('pw') });
    await setPassword(db, user.id, 'another secret phrase');
    const stored = await db.query('SELECT password_hash FROM users WHERE id = $1', [user.id]);
    expect(stored.rows[0].password_hash).not.toContain('another secret phrase');
    expect(await verifyPassword(stored.rows[0].password_hash, 'another secret phrase')).toBe(true);
  });
});
