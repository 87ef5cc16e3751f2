import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Plugin } from 'esbuild';
import { defineConfig, type Options } from 'tsup';
import { sdkFromPackage } from './scripts/build/sdk-from-package.js';

/**
 * The build for workers and edge runtimes: every relative import of `x.js` whose twin `x.web.ts`
 * exists resolves to the twin. The twins stand in for what needs Node (uploads from a path, the
 * undici dispatcher), so that this build imports no `node:` module and no undici.
 */
const webTwins: Plugin = {
  name: 'web-twins',
  setup(build) {
    build.onResolve({ filter: /^\.\.?\/.*\.js$/ }, (args) => {
      const twin = path.resolve(args.resolveDir, args.path.replace(/\.js$/, '.web.ts'));
      return existsSync(twin) ? { path: twin } : undefined;
    });
  },
};

const common: Options = {
  sourcemap: true,
  target: 'node20',
  splitting: false,
  // Class names are part of the API (`error.name`, `instanceof` checks by name in logs): esbuild
  // would otherwise rename a class whose name another module also uses.
  keepNames: true,
  // `node:fs` stays `node:fs`, so that bundlers and runtimes see a Node built-in, not a package.
  removeNodeProtocol: false,
  // Runtime dependencies stay external so users dedupe them (undici in particular must match the user's dispatcher).
  // The msw adapter imports the testing kit by name, so both subpaths share one copy of it.
  external: ['msw', 'msw/node', 'push-api-client/testing'],
};

const library: Options = {
  ...common,
  entry: {
    index: 'src/index.ts',
    schema: 'src/schema.ts',
    'testing/index': 'src/testing/index.ts',
    'testing/msw': 'src/testing/msw.ts',
  },
};

export default defineConfig([
  // The library ships as ESM and as a CJS copy, each with its declarations.
  { ...library, format: ['esm'], dts: true, clean: true },
  {
    ...library,
    format: ['cjs'],
    dts: true,
    clean: false,
    // `import('zod')` (loaded on first need) becomes a lazy require(): a CJS app then shares the zod
    // it requires itself, and runners that load CJS through node:vm (Jest) have no import().
    esbuildOptions(options) {
      options.supported = { ...options.supported, 'dynamic-import': false };
    },
  },
  {
    // Workers and edge runtimes (the workerd, worker and edge-light export conditions): web APIs
    // only. ESM, as those runtimes load it; the declarations are the Node build's.
    ...common,
    entry: { 'web/index': 'src/index.ts' },
    format: ['esm'],
    platform: 'neutral',
    target: 'es2022',
    clean: false,
    // Minified: a Worker's bundler minifies anyway, and the tarball carries this copy beside the
    // Node builds. keepNames keeps the class names; the source map is not published.
    minify: true,
    esbuildPlugins: [webTwins],
  },
  {
    // The CLI is ESM only: it is run, never imported. It imports the SDK from dist/index.js.
    // Two files: main.js installs the signal handlers, then loads program.js, the rest of the CLI.
    ...common,
    entry: { 'cli/main': 'src/cli/main.ts', 'cli/program': 'src/cli/program.ts' },
    format: ['esm'],
    clean: false,
    // The emulator command and the other parts loaded on first use become chunks of their own, so
    // that their imports (zod, for the emulator's control routes) stay out of a publish's memory:
    // without splitting, esbuild inlines them and hoists their imports to the top of program.js.
    splitting: true,
    esbuildOptions(options) {
      options.chunkNames = 'cli/chunks/[name]-[hash]';
    },
    banner: { js: '#!/usr/bin/env node' },
    esbuildPlugins: [sdkFromPackage(import.meta.dirname)],
  },
]);
