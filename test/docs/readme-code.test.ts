/**
 * Every ```ts block of README.md must type-check against the package (bash blocks are out of
 * scope). Blocks of other Markdown files can be checked too:
 * `DOCS_CHECK_FILES=ARCHITECTURE.md,SECURITY.md npx vitest run test/docs`.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { extractTsBlocks, typeCheckBlocks } from './code-blocks.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const files = (process.env.DOCS_CHECK_FILES ?? 'README.md').split(',').filter((file) => file.trim() !== '');

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

  for (const file of files) {
    it(`${file}: every ts block type-checks`, () => {
      // A missing file fails here rather than passing with nothing to check.
      const blocks = extractTsBlocks(readFileSync(`${root}/${file}`, 'utf8'), file);
      expect(blocks.length).toBeGreaterThan(0);
      expect(typeCheckBlocks(blocks, root)).toEqual([]);
    });
  }
});
