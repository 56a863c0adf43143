// Least privilege in PostgreSQL (src/db-roles.ts): the service connects as a role that is no superuser and owns
// nothing, may only add to and read the audit log, and cannot switch its trigger off; the migrations run as the owner,
// whose default privileges cover tables that later migrations make. A superuser DATABASE_URL is refused at start, and
// `npm run migrate` with DATABASE_ADMIN_URL sets both roles up on a database of its own.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { Writable } from 'node:stream';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createDb } from '../../src/db.ts';
import { embeddedUrls } from '../../src/dev/embedded-postgres.ts';
import { withDatabase } from '../../src/db-roles.ts';
import { prepareDatabase } from '../../src/migrate.ts';
import { createLogger } from '../../src/log.ts';
import { ownerDb, startTestServer, uniqueId, type TestServer } from '../helpers.ts';

const superuserUrl = embeddedUrls(inject('dataDir'), Number(new URL(inject('databaseUrl')).port)).superuserUrl;
let server: TestServer | undefined;
afterAll(() => server?.stop());

async function service(): Promise<TestServer> {
  server ??= await startTestServer();
  return server;
}

/** The SQLSTATE a statement fails with (undefined when it succeeds). */
async function refusal(db: pg.Pool | pg.Client, sql: string, params: unknown[] = []): Promise<string | undefined> {
  try {
    await db.query(sql, params);
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}

function run(entry: string, env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    env: { PATH: process.env.PATH!, HOME: os.homedir(), LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { exited, output: () => output };
}

describe("the service's database role", () => {
  it('is no superuser, may not create roles or databases, and owns no table', async () => {
    const { db } = (await service()).services;
    const role = await db.query(
      `SELECT current_user AS name, rolsuper, rolcreaterole, rolcreatedb, rolbypassrls, rolreplication FROM pg_roles WHERE rolname = current_user`,
    );
    expect(role.rows).toEqual([
      {
        name: 'svc_app',
        rolsuper: false,
        rolcreaterole: false,
        rolcreatedb: false,
        rolbypassrls: false,
        rolreplication: false,
      },
    ]);
    const owned = await db.query(
      `SELECT count(*)::int AS n FROM pg_class WHERE pg_has_role(current_user, relowner, 'USAGE') AND relnamespace = 'public'::regnamespace`,
    );
    expect(owned.rows[0].n).toBe(0);
    // Nor is it a member of a role that owns them.
    const memberOf = await db.query(
      `SELECT count(*)::int AS n FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.member WHERE r.rolname = current_user`,
    );
    expect(memberOf.rows[0].n).toBe(0);
    expect(await refusal(db, 'CREATE TABLE test_mine (a int)')).toBe('42501');
    expect(await refusal(db, 'CREATE TEMPORARY TABLE test_mine (a int)')).toBe('42501');
    expect(await refusal(db, 'CREATE ROLE test_someone')).toBe('42501');
    expect(await refusal(db, 'CREATE DATABASE test_another')).toBe('42501');
  });

  it('may add to the audit log and read it, and nothing more: no UPDATE, DELETE, TRUNCATE, or switching its trigger off', async () => {
    const { db } = (await service()).services;
    const actor = uniqueId('role-test');
    const added = await db.query(
      `INSERT INTO audit_log (actor, action, object_type) VALUES ($1, 'test', 'test') RETURNING id`,
      [actor],
    );
    expect((await db.query('SELECT actor FROM audit_log WHERE id = $1', [added.rows[0].id])).rows).toEqual([{ actor }]);
    expect(await refusal(db, `UPDATE audit_log SET actor = 'someone else' WHERE actor = $1`, [actor])).toBe('42501');
    expect(await refusal(db, 'DELETE FROM audit_log WHERE actor = $1', [actor])).toBe('42501');
    expect(await refusal(db, 'TRUNCATE audit_log')).toBe('42501');
    expect(await refusal(db, 'ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update')).toBe('42501');
    expect(await refusal(db, 'ALTER TABLE audit_log DISABLE TRIGGER ALL')).toBe('42501');
    expect(await refusal(db, 'DROP TRIGGER audit_log_no_update ON audit_log')).toBe('42501');
    expect(await refusal(db, 'DROP TABLE audit_log')).toBe('42501');
    expect(await refusal(db, `SET session_replication_role = replica`)).toBe('42501');
    expect((await db.query('SELECT count(*)::int AS n FROM audit_log WHERE actor = $1', [actor])).rows[0].n).toBe(1);
  });

  it('reads and writes the other tables but truncates, alters and drops none, and cannot record a migration', async () => {
    const { db } = (await service()).services;
    const tables = await db.query<{ table_name: string; privileges: string[] }>(
      `SELECT table_name, array_agg(privilege_type::text ORDER BY privilege_type) AS privileges
       FROM information_schema.table_privileges WHERE grantee = current_user AND table_schema = 'public' GROUP BY table_name`,
    );
    const byTable = new Map(tables.rows.map((row) => [row.table_name, row.privileges]));
    expect(byTable.get('deals')).toEqual(['DELETE', 'INSERT', 'SELECT', 'UPDATE']);
    expect(byTable.get('audit_log')).toEqual(['INSERT', 'SELECT']);
    expect(byTable.get('pgmigrations')).toEqual(['SELECT']);
    for (const [table, privileges] of byTable) expect(privileges, table).not.toContain('TRUNCATE');
    expect(await refusal(db, 'TRUNCATE deals')).toBe('42501');
    expect(await refusal(db, 'ALTER TABLE deals ADD COLUMN test_extra int')).toBe('42501');
    expect(await refusal(db, `INSERT INTO pgmigrations (name, run_on) VALUES ('test', now())`)).toBe('42501');
    // What it needs after tenders change runs as the owner, in the one function made for it.
    expect(await refusal(db, 'REFRESH MATERIALIZED VIEW CONCURRENTLY tender_facet_counts')).toBe('42501');
    expect(await refusal(db, 'SELECT tender_facets_refresh()')).toBeUndefined();
  });

  it('still meets the trigger as the owner, whose later tables it may use (default privileges)', async () => {
    const owner = ownerDb();
    const { db } = (await service()).services;
    const table = `test_later_${randomUUID().replaceAll('-', '')}`;
    try {
      expect((await owner.query('SELECT current_user AS name')).rows[0].name).toBe('svc_owner');
      const row = await owner.query(
        `INSERT INTO audit_log (actor, action, object_type) VALUES ('owner test', 'test', 'test') RETURNING id`,
      );
      await expect(owner.query(`DELETE FROM audit_log WHERE id = $1`, [row.rows[0].id])).rejects.toThrow(/append-only/);
      await expect(owner.query('TRUNCATE audit_log')).rejects.toThrow(/append-only/);
      await owner.query(`CREATE TABLE ${table} (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, note text)`);
      await db.query(`INSERT INTO ${table} (note) VALUES ('made by the service')`);
      expect((await db.query(`SELECT note FROM ${table}`)).rows).toEqual([{ note: 'made by the service' }]);
      expect(await refusal(db, `TRUNCATE ${table}`)).toBe('42501');
    } finally {
      await owner.query(`DROP TABLE IF EXISTS ${table}`);
      await owner.end();
    }
  });
});

describe('a superuser DATABASE_URL', () => {
  it('is refused at start, before anything is migrated or served', async () => {
    await expect(prepareDatabase({ databaseUrl: superuserUrl }, createLogger('silent'))).rejects.toThrow(
      /a superuser, and the service's processes may not/,
    );
    const api = run('src/bin/api.ts', { DATABASE_URL: superuserUrl, TEMPORAL_ADDRESS: inject('temporalAddress') });
    expect(await api.exited).toBe(1);
    expect(api.output()).toContain('a superuser, and the service');
    expect(api.output()).not.toContain(new URL(superuserUrl).password);
  });

  it('one URL of the owner (one role for everything, as before): it migrates with it, and the process warns', async () => {
    const lines: Array<{ level: number; msg: string }> = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()));
        done();
      },
    });
    const logger = createLogger('info', sink);
    const facts = await prepareDatabase({ databaseUrl: inject('databaseOwnerUrl') }, logger);
    expect(facts).toMatchObject({ role: 'svc_owner', superuser: false });
    expect(facts.owned).toBeGreaterThan(0);
    expect(lines.find((line) => line.level === 40)?.msg).toContain(
      '"svc_owner" owns tables or may create roles or databases',
    );
  });

  it('an application role checks the schema without migrating it', async () => {
    const facts = await prepareDatabase({ databaseUrl: inject('databaseUrl') }, createLogger('silent'));
    expect(facts).toMatchObject({ role: 'svc_app', superuser: false, owned: 0 });
  });
});

describe('npm run migrate with DATABASE_ADMIN_URL', () => {
  it(
    'makes the owner, the application role and their database, migrates as the owner and grants the application role',
    { timeout: 120_000 },
    async () => {
      const suffix = randomUUID().replaceAll('-', '').slice(0, 10);
      const database = `svc_migrate_${suffix}`;
      const owner = { name: `test_owner_${suffix}`, password: randomUUID() };
      const app = { name: `test_app_${suffix}`, password: randomUUID() };
      const urlOf = (role: { name: string; password: string }) => {
        const url = new URL(withDatabase(superuserUrl, database));
        url.username = role.name;
        url.password = role.password;
        return url.toString();
      };
      const admin = createDb(withDatabase(superuserUrl, 'postgres'), 1);
      try {
        const migrate = () =>
          run('src/bin/migrate.ts', {
            DATABASE_ADMIN_URL: superuserUrl,
            DATABASE_OWNER_URL: urlOf(owner),
            DATABASE_URL: urlOf(app),
          });
        const first = migrate();
        expect(await first.exited, first.output()).toBe(0);
        expect(first.output()).toContain('"msg":"database migrated"');
        for (const secret of [owner.password, app.password, new URL(superuserUrl).password])
          expect(first.output()).not.toContain(secret);
        // Again, harmlessly: nothing to migrate, roles and grants as they were.
        const second = migrate();
        expect(await second.exited, second.output()).toBe(0);
        expect(second.output()).not.toContain('"msg":"database migrated"');

        const roles = await admin.query(
          `SELECT rolname, rolsuper, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = ANY($1) ORDER BY rolname`,
          [[owner.name, app.name]],
        );
        expect(roles.rows).toEqual([
          { rolname: app.name, rolsuper: false, rolcreaterole: false, rolcreatedb: false },
          { rolname: owner.name, rolsuper: false, rolcreaterole: false, rolcreatedb: false },
        ]);
        const asApp = new pg.Client({ connectionString: urlOf(app) });
        await asApp.connect();
        try {
          expect(
            (
              await asApp.query(
                `SELECT count(*)::int AS n FROM pg_class WHERE pg_get_userbyid(relowner) = current_user`,
              )
            ).rows[0].n,
          ).toBe(0);
          const owners = await asApp.query(
            `SELECT DISTINCT pg_get_userbyid(relowner) AS owner FROM pg_class WHERE relnamespace = 'public'::regnamespace`,
          );
          expect(owners.rows).toEqual([{ owner: owner.name }]);
          await asApp.query(
            `INSERT INTO audit_log (actor, action, object_type) VALUES ('migrate test', 'test', 'test')`,
          );
          expect(await refusal(asApp, 'DELETE FROM audit_log')).toBe('42501');
          expect(await refusal(asApp, 'ALTER TABLE audit_log DISABLE TRIGGER ALL')).toBe('42501');
        } finally {
          await asApp.end();
        }
        // A process of the application role alone finds a migration missing (a newer release before its migrate job):
        // it says so and does not start, since it may not run it.
        const asOwner = new pg.Client({ connectionString: urlOf(owner) });
        await asOwner.connect();
        try {
          const last = (
            await asOwner.query(
              `DELETE FROM pgmigrations WHERE id = (SELECT max(id) FROM pgmigrations) RETURNING name, run_on`,
            )
          ).rows[0];
          await expect(prepareDatabase({ databaseUrl: urlOf(app) }, createLogger('silent'))).rejects.toThrow(
            new RegExp(`lacks 1 migration\\(s\\) \\(${last.name}\\).*npm run migrate`),
          );
          await asOwner.query('INSERT INTO pgmigrations (name, run_on) VALUES ($1, $2)', [last.name, last.run_on]);
          await expect(prepareDatabase({ databaseUrl: urlOf(app) }, createLogger('silent'))).resolves.toMatchObject({
            role: app.name,
            owned: 0,
          });
        } finally {
          await asOwner.end();
        }
      } finally {
        await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
        await admin.query(`DROP ROLE IF EXISTS ${app.name}`);
        await admin.query(`DROP ROLE IF EXISTS ${owner.name}`);
        await admin.end();
      }
    },
  );
});
