/**
 * One input file named twice in a publish (two spellings, a link, overlapping globs) would have its
 * records sent twice; it is refused while the inputs are checked, before anything is read or sent.
 */
import { linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/exit-codes.js';
import { resolveInputs } from '../../src/cli/readers/index.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'push-api-repeated-input-'));
  mkdirSync(join(dir, 'sub'));
  writeFileSync(join(dir, 'a.csv'), 'created,amount\n');
  writeFileSync(join(dir, 'b.csv'), 'created,amount\n');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('an input named twice', () => {
  it.each([
    ['the same path', () => join(dir, 'a.csv')],
    ['another spelling', () => join(dir, 'sub', '..', 'a.csv')],
    [
      'a symbolic link',
      () => {
        symlinkSync(join(dir, 'a.csv'), join(dir, 'link.csv'));
        return join(dir, 'link.csv');
      },
    ],
    [
      'a hard link',
      () => {
        linkSync(join(dir, 'a.csv'), join(dir, 'hard.csv'));
        return join(dir, 'hard.csv');
      },
    ],
  ])('is refused as %s, naming both', async (_, second) => {
    const first = join(dir, 'a.csv');
    const again = second();
    const error = await resolveInputs([first, join(dir, 'b.csv'), again], undefined).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe(
      `${again} and ${first} are the same file; name each input once, or its records are sent twice`,
    );
  });

  it('leaves two files with the same content alone', async () => {
    const inputs = await resolveInputs([join(dir, 'a.csv'), join(dir, 'b.csv')], undefined);
    expect(inputs.map((input) => input.path)).toEqual([join(dir, 'a.csv'), join(dir, 'b.csv')]);
  });
});
