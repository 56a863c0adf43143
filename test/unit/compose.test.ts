// docker-compose.yml cannot run here (no Docker engine), so we check what it promises: the services, that our three
// processes are built from the Dockerfile and start existing entry points, and that every variable they get is one
// the configuration schema knows and accepts.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { EnvSchema, parseConfig } from '../../src/config.ts';

const compose = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true });
const services = compose.services as Record<string, any>;
const ours = ['api', 'worker', 'data'];

// What `docker compose` does with ${VAR:-default} and ${VAR:?message}, for a user who set the required secrets.
function interpolate(value: unknown): string {
  const given: Record<string, string> = {
    SVC_MASTER_KEY: Buffer.alloc(32, 7).toString('base64'),
    SVC_BOOTSTRAP_ADMIN_TOKEN: 'a-long-random-bootstrap-token',
  };
  return String(value).replace(
    /\$\{(\w+)(?::([-?])([^}]*))?\}/g,
    (_match, name, kind, rest) => given[name] ?? (kind === '-' ? rest : ''),
  );
}

describe('docker-compose.yml', () => {
  it('has PostgreSQL, Temporal on PostgreSQL with its setup jobs, the Temporal UI, our three processes and the proxy', () => {
    expect(Object.keys(services).sort()).toEqual([
      'api',
      'data',
      'migrate',
      'postgresql',
      'proxy',
      'temporal',
      'temporal-namespace',
      'temporal-schema',
      'temporal-ui',
      'worker',
    ]);
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
      Object.entries(services[name].environment as Record<string, unknown>).map(([key, value]) => [
        key,
        interpolate(value),
      ]),
    );
    const known = Object.keys(EnvSchema.shape);
    for (const key of Object.keys(environment)) expect(known, key).toContain(key);
    const config = parseConfig(environment);
    // The application role, which owns nothing; the owner's and the superuser's URLs are the migrate job's alone.
    expect(config.DATABASE_URL).toBe('postgres://svc_app:svc_app@postgresql:5432/svc');
    expect(config.DATABASE_OWNER_URL).toBeUndefined();
    expect(config.DATABASE_ADMIN_URL).toBeUndefined();
    expect(services[name].depends_on.migrate.condition).toBe('service_completed_successfully');
    expect(config.TEMPORAL_ADDRESS).toBe('temporal:7233');
    expect(config.embeddedPostgres || config.embeddedTemporal).toBe(false);
  });

  it('runs the migrations as the owner in a job of their own, which makes the two roles as the superuser', () => {
    const job = services.migrate;
    expect(job.build).toBe('.');
    expect(job.command.at(-1)).toBe('src/bin/migrate.ts');
    expect(existsSync(job.command.at(-1))).toBe(true);
    expect(job.depends_on.postgresql.condition).toBe('service_healthy');
    const environment = Object.fromEntries(
      Object.entries(job.environment as Record<string, unknown>).map(([key, value]) => [key, interpolate(value)]),
    );
    const config = parseConfig(environment);
    expect(config.DATABASE_ADMIN_URL).toBe(
      `postgres://${services.postgresql.environment.POSTGRES_USER}:${services.postgresql.environment.POSTGRES_PASSWORD}@postgresql:5432/postgres`,
    );
    expect(config.DATABASE_OWNER_URL).toBe('postgres://svc_owner:svc_owner@postgresql:5432/svc');
    expect(config.DATABASE_URL).toBe(
      parseConfig(Object.fromEntries(Object.entries(services.api.environment).map(([k, v]) => [k, interpolate(v)])))
        .DATABASE_URL,
    );
  });

  it('runs the current Temporal images: the server, and admin-tools for the schema before it and the namespace after', () => {
    const images = Object.values(services)
      .map((service) => service.image)
      .filter(Boolean);
    expect(images.some((image: string) => image.startsWith('temporalio/auto-setup'))).toBe(false);
    expect(services.temporal.image).toMatch(/^temporalio\/server:1\.29\.\d+$/);
    for (const [name, job] of [
      ['temporal-schema', 'schema'],
      ['temporal-namespace', 'namespace'],
    ]) {
      const service = services[name];
      expect(service.image, name).toBe(services.temporal.image.replace('temporalio/server', 'temporalio/admin-tools'));
      expect(service.command, name).toEqual([job]);
      const script = service.volumes[0].split(':')[0];
      expect(service.entrypoint, name).toEqual(['/bin/sh', service.volumes[0].split(':')[1]]);
      expect(readFileSync(script, 'utf8'), name).toContain(`  ${job})`);
    }
    expect(services.temporal.depends_on['temporal-schema'].condition).toBe('service_completed_successfully');
    expect(services['temporal-namespace'].depends_on.temporal.condition).toBe('service_healthy');
    for (const name of ours)
      expect(services[name].depends_on['temporal-namespace'].condition, name).toBe('service_completed_successfully');
  });

  it('runs two main servers behind the proxy and two workers, as npm run start:cluster does', () => {
    expect(services.api.deploy.replicas).toBe(2);
    expect(services.worker.deploy.replicas).toBe(2);
    expect(services.api.ports).toBeUndefined(); // reached only through the proxy
    expect(services.proxy.command.at(-1)).toBe('src/bin/proxy.ts');
    expect(existsSync(services.proxy.command.at(-1))).toBe(true);
    expect(services.proxy.environment.PROXY_UPSTREAMS).toBe(`http://api:${services.api.environment.PORT}`);
    expect(services.proxy.depends_on.api.condition).toBe('service_healthy');
  });

  it('publishes the proxy on PORT and the data server on DATA_PORT', () => {
    expect(interpolate(services.proxy.ports[0])).toBe(`3000:${services.proxy.environment.PORT}`);
    expect(interpolate(services.data.ports[0])).toBe(`3100:${services.data.environment.DATA_PORT}`);
  });

  it('has a Dockerfile that installs from the lockfile and copies the code the entry points need', () => {
    const dockerfile = readFileSync('Dockerfile', 'utf8');
    expect(dockerfile).toContain('npm ci --omit=dev');
    for (const folder of ['src', 'workflows', 'activities']) expect(dockerfile).toContain(`COPY ${folder} ./${folder}`);
  });
});
