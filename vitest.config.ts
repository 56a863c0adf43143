// `npm test` runs three layers, each a vitest project with its own set-up (docs/testing.md):
//   unit      pure code: no PostgreSQL, no Temporal, no browser; the whole layer runs in seconds (`npm run test:unit`);
//   workflow  the deal workflow on Temporal's time-skipping test server with activities injected by the test, and the
//             replay of recorded histories: timers of days pass in the test server's clock (`npm run test:workflow`);
//   e2e       the HTTP and browser journeys over one embedded PostgreSQL and one Temporal dev server that
//             test/global-setup.ts starts for the run (`npm run test:e2e`).
//   e2e-keys  the e2e files that change state every file sees (the SSO signing key, operator-wide settings), on a
//             PostgreSQL and a Temporal of their own, one at a time, after the rest.
// The process-level start and stop tests live in the faults suite (vitest.faults.config.ts).
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/** The e2e files that change what every file sees: the SSO signing key, the operator-wide settings (e2e-keys below). */
const SHARED_STATE_FILES = [
  'test/e2e/sso-oidc.test.ts',
  'test/e2e/sso-tokens-keys.test.ts',
  'test/e2e/operator-second-factor.test.ts',
];

export default defineConfig({
  test: {
    // The Temporal native bridge crashes under worker threads.
    pool: 'forks',
    // At least two files at once, even on two cores (vitest would take one): most of an e2e file's time is spent
    // waiting on PostgreSQL, Temporal, a browser or a retry, which the other file fills (263 s against 390 s here).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 10_000 } },
      {
        extends: true,
        test: { name: 'workflow', include: ['test/workflow/**/*.test.ts'], testTimeout: 60_000, hookTimeout: 180_000 },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          exclude: SHARED_STATE_FILES,
          globalSetup: ['test/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 180_000,
        },
      },
      {
        // Rotating the SSO signing key changes what every server signs with, and an operator-wide setting holds for
        // every marketplace, while the test files share one database: such a file would change the key under another
        // file's tokens and cached JWKS, or the rules under its deals. These files get a PostgreSQL and a Temporal of
        // their own, one file at a time, after the other layers.
        extends: true,
        test: {
          name: 'e2e-keys',
          include: SHARED_STATE_FILES,
          globalSetup: ['test/global-setup.ts'],
          fileParallelism: false,
          sequence: { groupOrder: 1 },
          testTimeout: 60_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
