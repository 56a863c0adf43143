// docker-compose.yml cannot run here (no Docker engine), so we check what it promises: the services, that our three
// processes are built from the Dockerfile and start existing entry points, and that every variable they get is one
// the configuration schema knows and accepts.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { EnvSchema, parseConfig } from '../src/config.ts';

const compose = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true });
const services = compose.services as Record<string, any>;
const ours = ['api', 'worker', 'data'];

// What `docker compose` does with ${VAR:-default} and ${VAR:?message}, for a user who set the required secrets.
function interpolate(value: unknown): string {
  const given: Record<string, string> = {
    SVC_MASTER_KEY: Buffer.alloc(32, 7).toString('base64'),
    SVC_BOOTSTRAP_ADMIN_TOKEN: 'a-long-random-bootstrap-token',
  };
  return String(value).replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_match, name, kind, rest) => given[name] ?? (kind === '-' ? rest : ''));
}

describe('docker-compose.yml', () => {
  it('has PostgreSQL, Temporal on PostgreSQL, the Temporal UI and our three processes', () => {
    expect(Object.keys(services).sort()).toEqual(['api', 'data', 'postgresql', 'temporal', 'temporal-ui', 'worker']);
    expect(services.temporal.environment).toMatchObject({ DB: 'postgres12', POSTGRES_SEEDS: 'postgresql' });
    expect(services['temporal-ui'].environment.TEMPORAL_ADDRESS).toBe('temporal:7233');
    const dynamicConfig = services.temporal.volumes[0].split(':')[0];
    expect(readFileSync(dynamicConfig, 'utf8')).toContain('frontend.enableExecuteMultiOperation');
  });

  it.each(ours)('builds %s from the Dockerfile and starts an entry point that exists', (name) => {
    const service = services[name];
    expect(service.build).toBe('.');
    const entry = service.command.at(-1);
    expect(entry).toMatch(/^src\/bin\/\w+\.ts$/);
    expect(existsSync(entry)).toBe(true);
    expect(service.depends_on.postgresql.condition).toBe('service_healthy');
  });

  it.each(ours)('gives %s only variables the configuration knows, with values it accepts', (name) => {
    const environment = Object.fromEntries(
      Object.entries(services[name].environment as Record<string, unknown>).map(([key, value]) => [key, interpolate(value)]),
    );
    const known = Object.keys(EnvSchema.shape);
    for (const key of Object.keys(environment)) expect(known, key).toContain(key);
    const config = parseConfig(environment);
    expect(config.DATABASE_URL).toBe('postgres://svc:svc@postgresql:5432/svc');
    expect(config.TEMPORAL_ADDRESS).toBe('temporal:7233');
    expect(config.embeddedPostgres || config.embeddedTemporal).toBe(false);
  });

  it('publishes the main server on PORT and the data server on DATA_PORT', () => {
    expect(services.api.ports).toContain(`${services.api.environment.PORT}:3000`);
    expect(services.data.ports).toContain(`${services.data.environment.DATA_PORT}:3100`);
  });

  it('has a Dockerfile that installs from the lockfile and copies the code the entry points need', () => {
    const dockerfile = readFileSync('Dockerfile', 'utf8');
    expect(dockerfile).toContain('npm ci --omit=dev');
    for (const folder of ['src', 'workflows', 'activities']) expect(dockerfile).toContain(`COPY ${folder} ./${folder}`);
  });
});
