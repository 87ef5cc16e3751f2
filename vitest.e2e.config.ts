import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import base, { LANE_EXCLUDES } from './vitest.config.js';

/**
 * End-to-end files that load the npm `undici` package (which, on Node 20, becomes the dispatcher of
 * Node's fetch for every later file in the process), start msw's `setupServer` (which replaces the
 * global fetch while it listens) or stub the environment: they run with their modules and globals
 * afresh. test/docs/test-lanes.test.ts checks the list is complete.
 */
export const E2E_ISOLATED = ['test/examples/behind-a-proxy.e2e.test.ts', 'test/examples/msw-test-suite.e2e.test.ts'];

/**
 * The end-to-end lane, `npm run test:e2e`: real CLI processes and signals, chaos runs, the docs'
 * code blocks, the examples and browsers. Slower than `npm test`, and run by CI beside it.
 */
export default defineConfig({
  // The same `push-api-client` aliases as `npm test`, so these run from source too.
  resolve: base.resolve,
  test: {
    // Most of this lane waits on child processes, sockets and a browser: twice as many workers as
    // cores keeps the cores busy (on two cores, 4 workers take 40 % of the time one takes).
    maxWorkers: Math.min(8, 2 * availableParallelism()),
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/**/*.e2e.test.ts'],
          exclude: [...LANE_EXCLUDES, ...E2E_ISOLATED],
          // Each worker process keeps the modules it loaded from one file to the next: importing
          // the SDK, the emulator and Playwright afresh for every file took a third of the lane's CPU.
          isolate: false,
        },
      },
      { extends: true, test: { name: 'e2e-isolated', include: E2E_ISOLATED, isolate: true } },
    ],
  },
});
