import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * Runs this example suite on its own: `npx vitest run -c examples/msw-test-suite/vitest.config.ts`.
 * In a customer's project, with push-api-client installed, the aliases are not needed.
 */
export default defineConfig({
  resolve: {
    alias: [
      {
        find: /^push-api-client\/testing$/,
        replacement: fileURLToPath(new URL('../../src/testing/index.ts', import.meta.url)),
      },
      { find: /^push-api-client$/, replacement: fileURLToPath(new URL('../../src/index.ts', import.meta.url)) },
    ],
  },
  test: { include: ['examples/msw-test-suite/**/*.test.ts'], root: fileURLToPath(new URL('../..', import.meta.url)) },
});
