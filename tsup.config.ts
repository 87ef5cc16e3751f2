import { defineConfig } from 'tsup';

export default defineConfig([
  {
    // The library entries ship as ESM and CJS with declarations for both.
    entry: { index: 'src/index.ts', 'testing/index': 'src/testing/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    clean: true,
    target: 'node20',
    splitting: false,
    // Runtime dependencies stay external so users dedupe them (undici in particular must match the user's dispatcher).
    external: ['msw', 'msw/node'],
  },
  {
    // The CLI is ESM only: it is run, never imported.
    entry: { 'cli/main': 'src/cli/main.ts' },
    format: ['esm'],
    sourcemap: true,
    clean: false,
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
  },
]);
