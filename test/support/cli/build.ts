import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { build, type Options } from 'tsup';
import { sdkFromPackage } from '../../../scripts/build/sdk-from-package.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const CACHE = join(ROOT, 'node_modules', '.cache', 'push-api-cli-test');

/** A key that changes whenever any source file changes, so a stale build is never run. */
function sourceKey(): string {
  const hash = createHash('sha256');
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else {
        const info = statSync(path);
        hash.update(`${path}\0${info.size}\0${info.mtimeMs}\n`);
      }
    }
  };
  walk(join(ROOT, 'src'));
  return hash.digest('hex').slice(0, 16);
}

/**
 * Builds the CLI exactly as tsup.config.ts does (same entry, format, target and shebang) into a
 * directory owned by the tests, once per source state. It does not touch dist/, which other
 * builds clean concurrently. Parallel test files share the build through a lock directory.
 */
export async function buildCli(): Promise<string> {
  const key = sourceKey();
  const outDir = join(CACHE, key);
  const main = join(outDir, 'cli', 'main.js');
  if (existsSync(main)) return main;
  mkdirSync(CACHE, { recursive: true });
  const lock = `${outDir}.lock`;
  const deadline = Date.now() + 60_000;
  while (true) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (existsSync(main)) return main;
      if (Date.now() > deadline) throw new Error(`timed out waiting for the CLI build lock ${lock}`);
      await sleep(100);
    }
  }
  try {
    if (existsSync(main)) return main;
    const tmp = `${outDir}.tmp-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    await build(cliBuildOptions(tmp));
    renameSync(tmp, outDir);
    return main;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** The CLI's build as tsup.config.ts makes it, into `outDir`: the SDK beside the CLI, which imports it as ../index.js. */
export function cliBuildOptions(outDir: string): Options {
  return {
    config: false,
    entry: {
      index: join(ROOT, 'src/index.ts'),
      'cli/main': join(ROOT, 'src/cli/main.ts'),
      'cli/program': join(ROOT, 'src/cli/program.ts'),
    },
    format: ['esm'],
    outDir,
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
    sourcemap: false,
    clean: false,
    silent: true,
    external: ['msw', 'msw/node'],
    keepNames: true,
    splitting: true,
    esbuildOptions(options) {
      options.chunkNames = 'cli/chunks/[name]-[hash]';
    },
    esbuildPlugins: [sdkFromPackage(ROOT)],
  };
}
