import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * Recipes that need real servers (PostgreSQL, Redis): `npm run test:integration`, after
 * `eval "$(scripts/start-services.sh start)"` (or `bash scripts/ci-integration.sh`, which does it all).
 */
export default defineConfig({
  // The same `push-api-client` aliases as `npm test`, so the recipes run from source.
  resolve: base.resolve,
  test: {
    include: ['test/integration/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Two cores: the recipes start worker processes and servers of their own, one file at a time.
    fileParallelism: false,
  },
});
