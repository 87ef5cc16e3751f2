import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

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
    include: ['test/**/*.test.ts'],
    // The fast lane. CLI processes, chaos, docs, examples and browsers are `*.e2e.test.ts`
    // files, run by `npm run test:e2e` (vitest.e2e.config.ts).
    exclude: ['test/**/*.e2e.test.ts', 'test/integration/**', 'test/consumers/**', 'node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
