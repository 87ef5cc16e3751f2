import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/** Not in either lane: the recipes against real databases, and the packed-tarball consumers. */
export const LANE_EXCLUDES = ['test/integration/**', 'test/consumers/**', 'node_modules/**'];

/**
 * Test files that run with their modules and globals afresh: one that observes module state from
 * the start (zod loaded on first need); those that load the npm `undici` package, which on Node 20,
 * loaded before the first fetch, makes its own Agent the dispatcher of Node's fetch in every later
 * file (stricter about headers than Node's own); and those
 * that start msw's `setupServer`, which replaces the global fetch while it listens, so that a file
 * stopped before its `afterAll` cannot leave it in place for the files after it; and those that mock
 * a `node:` module, which must reach the modules they import afresh and no other file's.
 */
export const ISOLATED = [
  'test/finance/lazy-schema.test.ts',
  'test/client/insecure-http.test.ts',
  'test/http/proxy-errors.test.ts',
  'test/cli/proxy-tunnel.test.ts',
  'test/http/transport.test.ts',
  'test/client/msw.test.ts',
  'test/client/retry-timing.test.ts',
  'test/client/with-options.test.ts',
  'test/http/bearer-refresh.test.ts',
  'test/http/post-replay-copy.test.ts',
  'test/testing/content-length-msw.test.ts',
  'test/testing/msw-user-suite.test.ts',
  'test/testing/msw-http-parity.test.ts',
  'test/testing/fake-timers-user-suite.test.ts',
  'test/uploads/uploader-failures.test.ts',
  'test/uploads/uploader-input.test.ts',
  'test/uploads/uploader-stops.test.ts',
  'test/uploads/upload-stop-phases.test.ts',
  'test/uploads/undici-loaded.test.ts',
  'test/uploads/sources.test.ts',
  'test/cli/checkpoint-first-write.test.ts',
];

/**
 * Test files that measure how fast a loopback service answers, and fail when the machine is busy
 * enough to slow the answers down: they run after the others, one at a time.
 */
export const ALONE = [
  // Judges where the window settles against a service whose answers slow with its load: beside
  // other test files on two cores, their load read as queueing too and held the window under the
  // knee (once in two CI runs on Node 22 with three workers).
  'test/run/adaptive-knee.test.ts',
  'test/bench/delay-proxy.test.ts',
  'test/bench/sink-server.test.ts',
  'test/cli/temp-files.test.ts',
];

export default defineConfig({
  resolve: {
    // Tests and examples import the package by its public name, served from source.
    alias: [
      {
        find: /^push-api-client\/testing$/,
        replacement: fileURLToPath(new URL('./src/testing/index.ts', import.meta.url)),
      },
      {
        find: /^push-api-client\/testing\/msw$/,
        replacement: fileURLToPath(new URL('./src/testing/msw.ts', import.meta.url)),
      },
      {
        find: /^push-api-client\/schema$/,
        replacement: fileURLToPath(new URL('./src/schema.ts', import.meta.url)),
      },
      { find: /^push-api-client$/, replacement: fileURLToPath(new URL('./src/index.ts', import.meta.url)) },
    ],
  },
  test: {
    // The fast lane: `test/**/*.test.ts` in the two projects below. CLI processes, chaos, docs,
    // examples and browsers are `*.e2e.test.ts` files, run by `npm run test:e2e` (vitest.e2e.config.ts).
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Worker threads that keep the modules they loaded from one test file to the next: importing
    // the SDK and the emulator afresh for every file cost more than the tests themselves. The files
    // in ISOLATED run alone (test/docs/test-lanes.test.ts checks the list is complete).
    pool: 'threads',
    // Vitest's default leaves a core idle (one worker on two cores); the tests wait on sockets and
    // timers often enough that a worker more than the cores keeps them busy: on two cores, three
    // workers took 66-72 s where two took 89 s, and the lane still passed beside a process holding
    // a core at 100 % (100 s).
    maxWorkers: Math.max(3, availableParallelism() + 1),
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['test/**/*.test.ts'],
          exclude: [...LANE_EXCLUDES, 'test/**/*.e2e.test.ts', ...ISOLATED, ...ALONE],
          isolate: false,
        },
      },
      { extends: true, test: { name: 'isolated', include: ISOLATED, isolate: true } },
      {
        extends: true,
        test: { name: 'alone', include: ALONE, isolate: true, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
