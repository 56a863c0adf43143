// Least privilege in PostgreSQL: two roles. The owner owns the database and every object in it and runs the
// migrations; the application role, which every process of the service connects as, owns nothing: it reads and writes
// the tables' rows, may only add to and read the audit log, and cannot change the schema, truncate, switch a trigger
// off, create roles or databases. The embedded PostgreSQL makes both roles itself; `npm run migrate` with
// DATABASE_ADMIN_URL makes them on another server (docker-compose.yml's migrate job); README: Security, "Least privilege in PostgreSQL".
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import pg from 'pg';
import { ConfigError } from './config.ts';

/** The roles' names in the embedded PostgreSQL and docker-compose.yml; another deployment names its own. */
export const OWNER_ROLE = 'svc_owner';
export const APP_ROLE = 'svc_app';

/**
 * Tables the application role may only INSERT into and SELECT from: history that nobody rewrites (the audit log, and
 * the ledger's postings and entries). Their append-only triggers keep the owner from it too, and only a superuser could
 * drop those.
 */
export const INSERT_ONLY_TABLES = ['audit_log', 'ledger_postings', 'ledger_entries'];
/** node-pg-migrate's record of the migrations that ran: the processes read it to see whether the schema is current. */
export const MIGRATIONS_TABLE = 'pgmigrations';

const ident = pg.escapeIdentifier;

export interface RoleLogin {
  name: string;
  password: string;
}

/** The user name and password a connection URL carries (both must be there for a role to be made from it). */
export function loginOf(url: string, variable: string): RoleLogin {
  const parsed = new URL(url);
  const name = decodeURIComponent(parsed.username);
  const password = decodeURIComponent(parsed.password);
  if (!name || !password)
    throw new ConfigError(`${variable} must name the role and its password (postgres://role:password@host/database).`);
  return { name, password };
}

/** The database a connection URL names. */
export function databaseOf(url: string): string {
  return decodeURIComponent(new URL(url).pathname.replace(/^\//, '')) || 'postgres';
}

/** The same server and credentials, another database. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
}

/**
 * As a superuser (or a role with CREATEROLE and CREATEDB): the owner and the application role exist with these
 * passwords and no more than LOGIN, the database exists and belongs to the owner, and so does every table, view,
 * sequence and function in its public schema (a database from before the two roles, migrated as the superuser, is
 * handed over). Idempotent; run at every start of the embedded PostgreSQL and by `npm run migrate`.
 */
export async function ensureRoles(adminUrl: string, database: string, owner: RoleLogin, app: RoleLogin): Promise<void> {
  if (owner.name === app.name)
    throw new Error(`The owner and the application role must be two roles (both are "${owner.name}").`);
  const admin = new pg.Client({ connectionString: withDatabase(adminUrl, 'postgres') });
  await admin.connect();
  try {
    for (const role of [owner, app]) {
      const exists = (await admin.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role.name])).rowCount === 1;
      // The password goes as a SCRAM verifier: the server never sees it, and no statement log can show it.
      const attributes = `LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD ${pg.escapeLiteral(scramVerifier(role.password))}`;
      await admin.query(`${exists ? 'ALTER' : 'CREATE'} ROLE ${ident(role.name)} WITH ${attributes}`);
    }
    // Whatever the application role was given before, it is no member of any role (the owner's rights included).
    const memberships = await admin.query<{ rolname: string }>(
      `SELECT g.rolname FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid JOIN pg_roles u ON u.oid = m.member WHERE u.rolname = $1`,
      [app.name],
    );
    for (const { rolname } of memberships.rows) await admin.query(`REVOKE ${ident(rolname)} FROM ${ident(app.name)}`);
    const found = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database])).rowCount === 1;
    await admin.query(
      found
        ? `ALTER DATABASE ${ident(database)} OWNER TO ${ident(owner.name)}`
        : `CREATE DATABASE ${ident(database)} OWNER ${ident(owner.name)}`,
    );
  } finally {
    await admin.end();
  }

  const inDatabase = new pg.Client({ connectionString: withDatabase(adminUrl, database) });
  await inDatabase.connect();
  try {
    await inDatabase.query(`
      -- PostgreSQL 14 and older let every role create in the public schema; 15 and later let only the owner. Temporary
      -- tables too are tables of one's own, which the service never needs.
      REVOKE CREATE ON SCHEMA public FROM PUBLIC;
      GRANT USAGE, CREATE ON SCHEMA public TO ${ident(owner.name)};
      REVOKE TEMPORARY ON DATABASE ${ident(database)} FROM PUBLIC;
      DO $$
      DECLARE
        item record;
      BEGIN
        -- Relations (tables, views, materialized views, free-standing sequences; an identity's or serial's sequence
        -- goes with its table) and functions that are not the owner's and not an extension's.
        FOR item IN
          SELECT format('ALTER %s %s OWNER TO %I',
                   CASE c.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW'
                                  WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END,
                   c.oid::regclass, ${pg.escapeLiteral(owner.name)}) AS statement
          FROM pg_class c
          WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
            AND c.relowner <> ${pg.escapeLiteral(owner.name)}::regrole
            AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype IN ('e', 'a', 'i'))
          UNION ALL
          SELECT format('ALTER ROUTINE %s OWNER TO %I', p.oid::regprocedure, ${pg.escapeLiteral(owner.name)})
          FROM pg_proc p
          WHERE p.pronamespace = 'public'::regnamespace AND p.proowner <> ${pg.escapeLiteral(owner.name)}::regrole
            AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
        LOOP
          EXECUTE item.statement;
        END LOOP;
      END $$;
    `);
  } finally {
    await inDatabase.end();
  }
}

/**
 * As the owner, after the migrations: what the application role may do, on every table there is and (default
 * privileges) on every table a later migration creates. Idempotent, so a role made after the tables gets its rights at
 * the next migration run. Serialized by an advisory lock: concurrent GRANTs on one object can fail.
 */
export async function grantAppRole(client: pg.ClientBase, app: string): Promise<void> {
  const role = ident(app);
  await client.query('BEGIN');
  try {
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('svc grants'))`);
    await client.query(`
      GRANT CONNECT ON DATABASE ${ident((await client.query<{ db: string }>('SELECT current_database() AS db')).rows[0].db)} TO ${role};
      GRANT USAGE ON SCHEMA public TO ${role};
      GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role};
      GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO ${role};
      ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ${role};
      ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE ON SEQUENCES TO ${role};
      REVOKE TRUNCATE, REFERENCES, TRIGGER ON ALL TABLES IN SCHEMA public FROM ${role};
    `);
    for (const table of INSERT_ONLY_TABLES) {
      const exists =
        (await client.query('SELECT to_regclass($1) AS found', [`public.${table}`])).rows[0].found !== null;
      if (exists) await client.query(`REVOKE UPDATE, DELETE ON ${ident(table)} FROM ${role}`);
    }
    await client.query(`REVOKE INSERT, UPDATE, DELETE ON ${ident(MIGRATIONS_TABLE)} FROM ${role}`);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

/** What a connection's role is: the processes refuse a superuser and warn about an owner (src/migrate.ts). */
export interface RoleFacts {
  role: string;
  superuser: boolean;
  createRole: boolean;
  createDb: boolean;
  /** Tables, views and sequences of the public schema it owns (or owns through a role it is a member of). */
  owned: number;
}

export async function roleFacts(client: pg.ClientBase): Promise<RoleFacts> {
  const result = await client.query<RoleFacts>(`
    SELECT r.rolname AS role, r.rolsuper AS superuser, r.rolcreaterole AS "createRole", r.rolcreatedb AS "createDb",
           (SELECT count(*)::int FROM pg_class c
             WHERE c.relnamespace = 'public'::regnamespace AND pg_has_role(r.oid, c.relowner, 'USAGE')) AS owned
    FROM pg_roles r WHERE r.rolname = current_user`);
  return result.rows[0];
}

/**
 * PostgreSQL's SCRAM-SHA-256 verifier of a password (RFC 5802, as `ALTER ROLE … PASSWORD` stores it). PostgreSQL
 * prepares the password with SASLprep first, which leaves ASCII alone: NFKC stands in for it otherwise.
 */
export function scramVerifier(password: string, iterations = 4096): string {
  const salt = randomBytes(16);
  const salted = pbkdf2Sync(password.normalize('NFKC'), salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}
