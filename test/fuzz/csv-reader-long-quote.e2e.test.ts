/**
 * A reader regression found by fuzzing, on a 4 MB input (end-to-end lane for its size): an
 * unbalanced quote that runs on past twice MAX_ROW_BYTES is rejected by its line, and the lines
 * after it are read.
 */
import { describe, expect, it } from 'vitest';
import { MAX_ROW_BYTES } from '../../src/cli/readers/types.js';
import { readCsv } from '../support/readers.js';
import { chunked, drain } from './reader-input.js';

const HEADER = 'created,amount,currency,identifier,type,vendor\n';
const read = (text: string, sizes: number[] = []) => drain(readCsv(chunked(Buffer.from(text), sizes), 'in.csv', {}));

describe('CSV reader regressions on long inputs', () => {
  it('rejects an unbalanced quote that runs past twice MAX_ROW_BYTES by its line, and reads the lines after it', async () => {
    const text = `${HEADER}1700000000000,1,EUR,a,expense,ok\n1700000000000,2,EUR,b,expense,"never closed\n${'y,'.repeat(2 * MAX_ROW_BYTES)}\n1700000000000,3,EUR,c,expense,C\n`;
    const { rows, fatal } = await read(
      text,
      Array.from({ length: 80 }, () => 65_536),
    );
    expect(fatal).toBeUndefined();
    expect(rows.map((row) => [row.kind, row.line])).toEqual([
      ['record', 2],
      ['reject', 3],
      ['reject', 4],
      ['record', 5],
    ]);
    expect(rows[1]).toMatchObject({ issues: [{ message: expect.stringMatching(/row is longer than/) }] });
  });
});
