/**
 * Compiles `bench/children/*.ts` to plain ESM under `bench/.build/`. Measured children must run on
 * bare `node`: a TypeScript loader such as tsx adds about 48 MB of RSS to the process, which would
 * be counted against the SDK. The SDK is bundled from `src/` (what is being measured), except in
 * the children that import `push-api-client` itself (dist/, built by ensureBuiltPackage); npm packages
 * stay external and resolve from the repository's node_modules.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { build } from 'esbuild';
import { BENCH_DIR, BUILD_DIR } from './paths.js';

export async function buildChildren(): Promise<void> {
  const dir = path.join(BENCH_DIR, 'children');
  const entries = (await readdir(dir)).filter((file) => file.endsWith('.ts')).map((file) => path.join(dir, file));
  await build({
    entryPoints: entries,
    outdir: BUILD_DIR,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    // The one-shot children import the built package by its name, as an installed user would.
    external: ['push-api-client'],
    logLevel: 'error',
  });
}
