import type { FinanceRecord } from './schema.js';

/**
 * At least the UTF-8 size of a finance record's JSON, without serializing it: batches far under
 * `maxBatchBytes` are filled from this bound, and only records near the limit are serialized and
 * measured (batcher.ts). Each part is the most JSON can take:
 * - a string of n UTF-16 code units: `\uXXXX` escapes, 6 bytes per unit, plus 2 quotes;
 * - a finite number: 25 characters (`-2.2250738585072014e-308` is 24);
 * - a key of the schema with its quotes, colon and comma: 21 (`transactionNumber` is 17 long);
 * - the braces: 2.
 * A key whose value is `undefined` is left out by `JSON.stringify`; it is counted anyway.
 */

const BRACES = 2;
const KEY = 21;
const NUMBER = 25;

const textBound = (value: string): number => 6 * value.length + 2;

export function recordJsonBound(record: FinanceRecord): number {
  let bytes = BRACES;
  for (const key in record) {
    const value = record[key as keyof FinanceRecord];
    bytes += KEY + (typeof value === 'string' ? textBound(value) : NUMBER);
  }
  return bytes;
}
