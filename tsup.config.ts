import { defineConfig, type Options } from 'tsup';

const library: Options = {
  entry: { index: 'src/index.ts', schema: 'src/schema.ts', 'testing/index': 'src/testing/index.ts' },
  sourcemap: true,
  target: 'node20',
  splitting: false,
  // Runtime dependencies stay external so users dedupe them (undici in particular must match the user's dispatcher).
  external: ['msw', 'msw/node'],
};

export default defineConfig([
  // The library ships as ESM and as a CJS copy, each with its declarations.
  { ...library, format: ['esm'], dts: true, clean: true },
  {
    ...library,
    format: ['cjs'],
    dts: true,
    clean: false,
    // p-retry and p-limit are ESM only. Node >= 20.19 can require() them, but esbuild's interop then
    // takes the module namespace for the default export and calls it. Bundling them into the CJS
    // copy avoids the interop; the ESM build imports the shared installed copies.
    noExternal: ['p-retry', 'p-limit'],
    // `import('zod')` (loaded on first need) becomes a lazy require(): a CJS app then shares the zod
    // it requires itself, and runners that load CJS through node:vm (Jest) have no import().
    esbuildOptions(options) {
      options.supported = { ...options.supported, 'dynamic-import': false };
    },
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
