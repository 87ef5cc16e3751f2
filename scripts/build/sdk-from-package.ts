import path from 'node:path';
import type { Plugin } from 'esbuild';

/**
 * The CLI is a user of the SDK like any script: its build imports the package's own SDK build
 * (`dist/index.js`, beside `dist/cli/`) instead of bundling a second copy of it into
 * `dist/cli/main.js`. Every relative import that resolves to `src/index.ts` becomes the external
 * `../index.js`; the testing kit's modules the CLI uses stay bundled.
 */
export function sdkFromPackage(root: string): Plugin {
  const sdkEntry = path.join(root, 'src', 'index.ts');
  return {
    name: 'sdk-from-package',
    setup(build) {
      build.onResolve({ filter: /^\.\.?\/(.*\/)?index\.js$/ }, (args) => {
        const target = path.resolve(args.resolveDir, args.path.replace(/\.js$/, '.ts'));
        return target === sdkEntry ? { path: '../index.js', external: true } : undefined;
      });
    },
  };
}
