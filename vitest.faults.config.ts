// `npm run test:faults`: the faults suite (test/faults), apart from `npm test`: it starts the production topology
// and breaks its parts on purpose, which takes minutes and both cores.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/faults/**/*.faults.ts'],
    // The Temporal native bridge crashes under worker threads.
    pool: 'forks',
    // One scenario file at a time: each runs a whole topology on this machine's two cores.
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});
