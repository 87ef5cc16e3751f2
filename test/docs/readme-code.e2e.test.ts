/**
 * Every ```ts block of the user documentation (README.md and docs/*.md) must type-check against the
 * package (bash blocks are out of scope; the README's JavaScript Quick start runs in the consumer
 * tests). Blocks of other Markdown files can be checked too:
 * `DOCS_CHECK_FILES=ARCHITECTURE.md,SECURITY.md npx vitest run test/docs`.
 */
import { describe, expect, it } from 'vitest';
import { docFiles, readDoc, REPO_ROOT as root } from '../support/doc-files.js';
import { extractTsBlocks, typeCheckBlocks } from './code-blocks.js';

const files = process.env.DOCS_CHECK_FILES?.split(',').filter((file) => file.trim() !== '') ?? docFiles();
/** Pages that must hold ts blocks: a page that lost them all would otherwise pass with nothing checked. */
const PAGES_WITH_CODE = [
  'docs/configuration.md',
  'docs/publishing.md',
  'docs/uploads.md',
  'docs/outcomes.md',
  'docs/testing.md',
];

const fixture = [
  '# Title',
  '```bash',
  'npm install push-api-client',
  '```',
  '```ts',
  "import { PushClient } from 'push-api-client';",
  'const mine = new PushClient();',
  'const report = await mine.finance.publish(appId, records, { signal });',
  'const sent: number = report.recordsSent + (await client.tokens.getToken()).scopes.length;',
  '```',
  '~~~typescript',
  "const wrong: number = 'not a number';",
  '~~~',
  '````ts',
  '// a ``` line does not close a longer fence',
  "client.finance.publish(appId, records, { batchSize: '10' });",
  '````',
].join('\n');

describe('README code blocks', () => {
  it('extracts ts blocks with their Markdown line and skips other languages', () => {
    const blocks = extractTsBlocks(fixture, 'FIXTURE.md');
    expect(blocks.map((block) => block.line)).toEqual([6, 12, 15]);
    expect(blocks[1]?.code).toBe("const wrong: number = 'not a number';");
    expect(blocks[2]?.code).toBe(
      "// a ``` line does not close a longer fence\nclient.finance.publish(appId, records, { batchSize: '10' });",
    );
  });

  it('passes correct snippets and reports each type error at its Markdown line', () => {
    const blocks = extractTsBlocks(fixture, 'FIXTURE.md');
    const errors = typeCheckBlocks(blocks, root);
    expect(errors.filter((error) => error.startsWith('FIXTURE.md:6:') || error.startsWith('FIXTURE.md:7:'))).toEqual(
      [],
    );
    expect(errors.some((error) => error.startsWith('FIXTURE.md:12:7 TS2322'))).toBe(true);
    expect(errors.some((error) => error.startsWith('FIXTURE.md:16:42 TS2322'))).toBe(true);
    expect(errors).toHaveLength(2);
  });

  it('finds the documentation pages, and ts blocks where they belong', () => {
    expect(docFiles()).toEqual(expect.arrayContaining(['README.md', ...PAGES_WITH_CODE]));
    for (const file of PAGES_WITH_CODE) expect(extractTsBlocks(readDoc(file), file).length).toBeGreaterThan(0);
  });

  // One program for the blocks of every page: a program per page would cost seconds each.
  let errors: string[] | undefined;
  const errorsOf = (file: string): string[] => {
    errors ??= typeCheckBlocks(
      files.flatMap((page) => extractTsBlocks(readDoc(page), page)),
      root,
    );
    return errors.filter((error) => error.startsWith(`${file}:`));
  };

  for (const file of files) {
    it(`${file}: every ts block type-checks`, () => {
      // A missing file fails in readDoc rather than passing with nothing to check.
      extractTsBlocks(readDoc(file), file);
      expect(errorsOf(file)).toEqual([]);
    });
  }
});
