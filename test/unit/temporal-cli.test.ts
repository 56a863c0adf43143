// Resolving the Temporal CLI: TEMPORAL_CLI, then PATH, then the cached build, then a Go build; a clear message otherwise.
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveTemporalCli, temporalCliCacheDir } from '../../src/dev/temporal-cli.ts';

function executable(dir: string, name: string): string {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  writeFileSync(file, '#!/bin/sh\nexit 0\n');
  chmodSync(file, 0o755);
  return file;
}

function sandbox() {
  const root = mkdtempSync(path.join(os.tmpdir(), 'svc-cli-'));
  return { root, env: { PATH: path.join(root, 'empty-bin'), XDG_CACHE_HOME: path.join(root, 'cache') } };
}

const say = () => {};

describe('resolveTemporalCli', () => {
  it('uses TEMPORAL_CLI first, and refuses one that is not executable', async () => {
    const { root, env } = sandbox();
    const explicit = executable(path.join(root, 'custom'), 'my-temporal');
    executable(path.join(root, 'empty-bin'), 'temporal');
    expect(await resolveTemporalCli({ explicit, say, env })).toBe(explicit);
    await expect(resolveTemporalCli({ explicit: path.join(root, 'missing'), say, env })).rejects.toThrow(
      /TEMPORAL_CLI=.* is not an executable/,
    );
  });

  it('then `temporal` on PATH, before the cache', async () => {
    const { root, env } = sandbox();
    const onPath = executable(path.join(root, 'empty-bin'), 'temporal');
    executable(temporalCliCacheDir(env), 'temporal');
    expect(await resolveTemporalCli({ say, env })).toBe(onPath);
  });

  it('then the cached build outside the repository', async () => {
    const { env } = sandbox();
    const cached = executable(temporalCliCacheDir(env), 'temporal');
    expect(cached).toContain(path.join('svc', 'temporal-cli-1.5.1'));
    expect(await resolveTemporalCli({ say, env })).toBe(cached);
  });

  it('builds with `go install …@v1.5.1` into the cache when Go is there', async () => {
    const { root, env } = sandbox();
    // A stand-in `go` records its arguments and GOBIN, and "builds" by writing the binary where GOBIN says.
    const bin = path.join(root, 'empty-bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(
      path.join(bin, 'go'),
      `#!/bin/sh\necho "$@" > "${root}/go-args"\nprintf '#!/bin/sh\\n' > "$GOBIN/temporal"\n/bin/chmod +x "$GOBIN/temporal"\n`,
    );
    chmodSync(path.join(bin, 'go'), 0o755);
    const messages: string[] = [];
    const resolved = await resolveTemporalCli({ say: (message) => messages.push(message), env });
    expect(resolved).toBe(path.join(temporalCliCacheDir(env), 'temporal'));
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(path.join(root, 'go-args'), 'utf8').trim()).toBe(
      'install -v github.com/temporalio/cli/cmd/temporal@v1.5.1',
    );
    expect(messages.join('\n')).toMatch(/takes a few minutes/);
  });

  it('says how to get the CLI when neither it nor Go is found', async () => {
    const { env } = sandbox();
    await expect(resolveTemporalCli({ say, env })).rejects.toThrow(
      /neither it nor Go was found[\s\S]*TEMPORAL_CLI[\s\S]*TEMPORAL_ADDRESS/,
    );
  });
});
