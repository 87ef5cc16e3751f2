/**
 * The packed package as a fresh clone makes it: the tracked files of the work tree, without `dist/`,
 * packed by `npm pack` (whose prepack script builds). The tarball must hold the build, and every
 * relative link of its README.md, SECURITY.md and docs/*.md must resolve inside it, so that the
 * docs work in node_modules and on the registry's page.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkedPages, REPO_ROOT } from '../support/doc-files.js';
import { brokenLinks } from '../support/markdown-links.js';

let work: string;
let unpacked: string;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'push-api-client-pack-'));
  const clone = join(work, 'clone');
  const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: REPO_ROOT, encoding: 'utf8' })
    .split('\0')
    .filter((path) => path !== '' && existsSync(join(REPO_ROOT, path)));
  for (const path of tracked) {
    mkdirSync(dirname(join(clone, path)), { recursive: true });
    copyFileSync(join(REPO_ROOT, path), join(clone, path));
  }
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(clone, 'node_modules'), 'dir');
  expect(existsSync(join(clone, 'dist'))).toBe(false);
  const out = join(work, 'out');
  mkdirSync(out);
  const tarball = execFileSync('npm', ['pack', '--silent', '--pack-destination', out], {
    cwd: clone,
    encoding: 'utf8',
  })
    .trim()
    .split('\n')
    .at(-1) as string;
  execFileSync('tar', ['-xzf', join(out, tarball), '-C', work]);
  unpacked = join(work, 'package');
}, 300_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the packed tarball of a fresh clone', () => {
  it('holds the build: the prepack script built it', () => {
    for (const path of ['dist/index.js', 'dist/index.cjs', 'dist/index.d.ts', 'dist/cli/main.js']) {
      expect(existsSync(join(unpacked, path)), path).toBe(true);
    }
  });

  it('ships every page of the user documentation, and the examples', () => {
    for (const page of linkedPages()) expect(existsSync(join(unpacked, page)), page).toBe(true);
    const examples = readdirSync(join(REPO_ROOT, 'examples'));
    expect(readdirSync(join(unpacked, 'examples')).sort()).toEqual(examples.sort());
  });

  it('resolves every relative link of README.md, SECURITY.md and docs/*.md inside the package', () => {
    expect(brokenLinks(unpacked, linkedPages())).toEqual([]);
  });
});
