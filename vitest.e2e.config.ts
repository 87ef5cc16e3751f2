import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import base, { LANE_EXCLUDES } from './vitest.config.js';

/**
 * The end-to-end lane, `npm run test:e2e`: real CLI processes and signals, chaos runs, the docs'
 * code blocks, the examples and browsers. Slower than `npm test`, and run by CI beside it.
 */
export default defineConfig({
  // The same `push-api-client` aliases as `npm test`, so these run from source too.
  resolve: base.resolve,
  test: {
    include: ['test/**/*.e2e.test.ts'],
    exclude: LANE_EXCLUDES,
    // Most of this lane waits on child processes, sockets and a browser: twice as many workers as
    // cores keeps the cores busy (on two cores, 4 workers take 40 % of the time one takes).
    maxWorkers: Math.min(8, 2 * availableParallelism()),
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
