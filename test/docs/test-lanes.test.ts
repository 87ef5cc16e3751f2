/**
 * The fast lane shares modules and globals between test files (vitest.config.ts). A file that
 * replaces the global fetch (msw's setupServer) or loads the npm undici package (which, on Node 20,
 * takes over the dispatcher of Node's fetch) must run isolated, or a later file's uploads fail; so
 * must a file that mocks a `node:` module, or the mock misses modules another file loaded first.
 */
import { existsSync, readFileSync } from 'node:fs';
import { glob } from 'tinyglobby';
import { describe, expect, it } from 'vitest';
import { ALONE, ISOLATED } from '../../vitest.config.js';
import { E2E_ISOLATED } from '../../vitest.e2e.config.js';

const ROOT = new URL('../../', import.meta.url);
const GLOBAL_CHANGERS = [/\bsetupServer\(/, /from 'undici'/, /\bdispatcher:/, /\bvi\.mock\('node:/];

describe('the fast lane', () => {
  it('isolates every test file that changes the global fetch, and lists only files that exist', async () => {
    const files = await glob('test/**/*.test.ts', {
      cwd: ROOT.pathname,
      // This file names the patterns it looks for.
      ignore: ['test/**/*.e2e.test.ts', 'test/integration/**', 'test/consumers/**', 'test/docs/test-lanes.test.ts'],
    });
    const changers = files.filter((file) =>
      GLOBAL_CHANGERS.some((pattern) => pattern.test(readFileSync(new URL(file, ROOT), 'utf8'))),
    );
    expect(changers.length).toBeGreaterThan(0);
    expect(changers.filter((file) => !ISOLATED.includes(file))).toEqual([]);
    expect(ISOLATED.filter((file) => !existsSync(new URL(file, ROOT)))).toEqual([]);
  });

  it('runs the load-sensitive files alone, after the others, and lists only files that exist', () => {
    expect(ALONE.length).toBeGreaterThan(0);
    expect(ALONE.filter((file) => !existsSync(new URL(file, ROOT)))).toEqual([]);
    expect(ALONE.filter((file) => ISOLATED.includes(file))).toEqual([]);
  });
});

describe('the end-to-end lane', () => {
  /**
   * A file's text and that of the test helpers and examples it imports by a relative path, two
   * levels down: `from '…'`, side-effect `import '…'` and `import('…')`. (The SDK's own modules
   * load undici only for a `dispatcher` the test would pass, which its own text shows.)
   */
  const textWithImports = (url: URL, depth = 2): string => {
    const text = readFileSync(url, 'utf8');
    if (depth === 0) return text;
    const imported = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)]
      .map((match) => new URL((match[1] as string).replace(/\.js$/, '.ts'), url))
      .filter((target) => existsSync(target) && /\/(test|examples)\/.*\.(ts|mjs|js)$/.test(target.pathname));
    return [text, ...imported.map((target) => textWithImports(target, depth - 1))].join('\n');
  };

  it('isolates every file that changes the global fetch or stubs the environment, and lists only files that exist', async () => {
    const files = await glob('test/**/*.e2e.test.ts', { cwd: ROOT.pathname });
    const changers = files.filter((file) =>
      [...GLOBAL_CHANGERS, /\bvi\.stub(Env|Global)\(/].some((pattern) =>
        pattern.test(textWithImports(new URL(file, ROOT))),
      ),
    );
    expect(changers.length).toBeGreaterThan(0);
    expect(changers.filter((file) => !E2E_ISOLATED.includes(file))).toEqual([]);
    expect(E2E_ISOLATED.filter((file) => !existsSync(new URL(file, ROOT)))).toEqual([]);
  });
});
