/**
 * Every relative link of the user documentation (README.md, SECURITY.md, docs/*.md) resolves in the
 * repository: the file exists, and an `#anchor` names a heading of the page it points to. The
 * packed tarball is checked the same way by package-links.e2e.test.ts.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { linkedPages, REPO_ROOT } from '../support/doc-files.js';
import { anchorsOf, brokenLinks, relativeLinks } from '../support/markdown-links.js';

describe('relative links of the documentation', () => {
  it('every one resolves in the repository', () => {
    expect(brokenLinks(REPO_ROOT, linkedPages())).toEqual([]);
  });

  it('the checker finds links in prose, skips code and external addresses, and reads anchors', () => {
    const page = [
      '# Title with `code` and a [link](x.md)',
      'See [a](docs/a.md), ![shot](img.png "title") and [b](<b.md#Part-two>).',
      '`[not](inline.md)` and https://example.com and [ext](https://example.com/x.md) [mail](mailto:a@b.c)',
      '```ts',
      "const skipped = '[no](fenced.md)';",
      '```',
      '[ref]: ../up.md',
      '## Part two',
      '## Part two',
    ].join('\n');
    expect(relativeLinks(page, 'P.md').map((link) => [link.line, link.target])).toEqual([
      [1, 'x.md'],
      [2, 'docs/a.md'],
      [2, 'img.png'],
      [2, 'b.md#Part-two'],
      [7, '../up.md'],
    ]);
    expect([...anchorsOf(page)]).toEqual(['title-with-code-and-a-link', 'part-two', 'part-two-1']);
  });

  it('reports a missing file, a missing heading and a target outside the root', () => {
    const root = mkdtempSync(join(tmpdir(), 'links-'));
    try {
      mkdirSync(join(root, 'docs'));
      writeFileSync(join(root, 'docs', 'a.md'), '# A\n\n## Retry timing\n');
      writeFileSync(
        join(root, 'README.md'),
        '[ok](docs/a.md#retry-timing) [gone](docs/b.md) [anchor](docs/a.md#nope) [self](#a-title) [out](../x.md)\n# A title\n',
      );
      expect(brokenLinks(root, ['README.md'])).toEqual([
        'README.md:1 docs/b.md: docs/b.md does not exist',
        'README.md:1 docs/a.md#nope: docs/a.md has no heading #nope',
        'README.md:1 ../x.md: points outside the package root',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
