/**
 * The files that each hold one layer of a call (ARCHITECTURE.md, "Two trips, file by file") read as
 * one file each: a header that lists the file's parts in the order the file holds them, and each
 * part opened by one section comment in the one style. And the pages and comments that name a
 * source file name one that exists, since joining files left the old names behind.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { linkedPages, REPO_ROOT } from '../support/doc-files.js';

const LAYER_FILES = [
  'src/http/http-client.ts',
  'src/http/attempt.ts',
  'src/http/fetch.ts',
  'src/auth/token-manager.ts',
  'src/run/engine.ts',
  'src/finance/publisher.ts',
  'src/finance/batch-source.ts',
  'src/uploads/uploader.ts',
  'src/uploads/put-body.ts',
  'src/internal/text.ts',
];

/** A section's first line: `// ── Title ───…`. */
const SECTION = /^\/\/ ── (\S.*?) ─{3,}$/;

interface Layout {
  /** The items of the header's "In this order:" list. */
  headerItems: number;
  sections: string[];
  /** Doc comments at the top level followed by a blank line: attached to nothing a reader expects. */
  floating: number[];
}

function layoutOf(text: string): Layout {
  const lines = text.split('\n');
  const headerEnd = lines.indexOf(' */');
  const header = lines.slice(0, headerEnd + 1).join('\n');
  const list = header.split('In this order:')[1] ?? '';
  const floating: number[] = [];
  for (let i = headerEnd + 1; i < lines.length; i++) {
    if (lines[i] !== '/**' && !lines[i]?.startsWith('/** ')) continue;
    let end = i;
    while (!lines[end]?.includes('*/')) end++;
    if (lines[end + 1]?.trim() === '') floating.push(i + 1);
  }
  return {
    headerItems: list.split('\n').filter((line) => line.startsWith(' * - ')).length,
    sections: lines.flatMap((line) => SECTION.exec(line)?.[1] ?? []),
    floating,
  };
}

describe('each layer file', () => {
  it.each(LAYER_FILES)('%s: its header lists its sections, each opened by a section comment', (file) => {
    const layout = layoutOf(readFileSync(path.join(REPO_ROOT, file), 'utf8'));
    expect(layout.sections.length).toBeGreaterThan(1);
    expect(layout.headerItems).toBe(layout.sections.length);
    expect(layout.floating).toEqual([]);
  });

  it('the reading finds the header list, the sections and a floating doc comment', () => {
    const text = [
      '/**',
      ' * Two parts. In this order:',
      ' * - one;',
      ' * - two.',
      ' */',
      '',
      '// ── One ───',
      '/** Attached. */',
      'const a = 1;',
      '',
      '// ── Two ─────────',
      '/**',
      ' * Floating.',
      ' */',
      '',
      'const b = 2;',
    ].join('\n');
    expect(layoutOf(text)).toEqual({ headerItems: 2, sections: ['One', 'Two'], floating: [12] });
  });
});

/** Tracked files, relative to the repository root. */
function trackedFiles(): string[] {
  return execFileSync('git', ['ls-files'], { cwd: REPO_ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
}

/** A file name as a page or comment writes it (`http/fetch.ts`, or a path that starts with `../`), not a glob or a URL. */
const FILE_NAME = /(?<![\w./*-])(?:\.\.\/)*(?:\w[\w.-]*\/)*\w[\w.-]*\.ts(?![\w*])/g;

/** Names that are not files of this tree on purpose. */
const NOT_FILES = new Set([
  // the pattern of a web twin's name (ARCHITECTURE.md, "Builds and the runtime seam")
  'x.web.ts',
  // a file of an experiment's branch, which bench/README.md reports on
  'src/finance/record-encoder.ts',
]);

/**
 * The names in `text` (of the file `from`) that no tracked file answers to: by its path from `from`'s
 * folder (a path that starts with `../`), from the root, src/, test/ or bench/, as the end of a path, or as a base name.
 */
function missingFiles(text: string, files: readonly string[], from = 'README.md'): string[] {
  const names = new Set(files.map((file) => path.posix.basename(file)));
  const paths = new Set(files);
  const found = (name: string) => {
    if (NOT_FILES.has(name)) return true;
    if (name.startsWith('../')) return paths.has(path.posix.join(path.posix.dirname(from), name));
    if (!name.includes('/')) return names.has(name);
    return (
      ['', 'src/', 'test/', 'bench/'].some((root) => paths.has(root + name)) ||
      files.some((file) => file.endsWith(`/${name}`))
    );
  };
  return [...new Set(text.match(FILE_NAME) ?? [])].filter((name) => !found(name));
}

describe('names of source files', () => {
  const files = trackedFiles();

  it.each([...linkedPages(), 'ARCHITECTURE.md', 'bench/README.md'])('%s names only files that exist', (page) => {
    expect(missingFiles(readFileSync(path.join(REPO_ROOT, page), 'utf8'), files, page)).toEqual([]);
  });

  it('comments in src/ and test/ name only files that exist', () => {
    const missing = files
      .filter((file) => /^(src|test)\/.*\.ts$/.test(file) && !file.endsWith('.generated.ts'))
      .flatMap((file) => {
        const comments = readFileSync(path.join(REPO_ROOT, file), 'utf8')
          .split('\n')
          .filter((line) => /^\s*(\/\/|\/\*|\*)/.test(line))
          .join('\n');
        return missingFiles(comments, files, file).map((name) => `${file}: ${name}`);
      });
    expect(missing).toEqual([]);
  });

  it('the check finds an old name and passes a present one', () => {
    const files = ['src/http/fetch.ts', 'test/http/redirects.test.ts', 'bench/run.ts', 'examples/a.ts'];
    const text =
      'see http/fetch.ts, redirects.ts and run.ts; `http/redirects*`, test/http/redirects.test.ts, a `.web.ts` twin,' +
      ' ../examples/a.ts and ../examples/b.ts';
    expect(missingFiles(text, files, 'docs/x.md')).toEqual(['redirects.ts', '../examples/b.ts']);
  });
});
