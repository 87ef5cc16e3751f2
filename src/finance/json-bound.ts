import type { FinanceRecord } from './schema.js';

/**
 * At least the UTF-8 size of a finance record's JSON, without serializing it: batches far under
 * `maxBatchBytes` are filled from this bound, and only records near the limit are serialized and
 * measured (batcher.ts). Each part is the most JSON can take:
 * - a string of n UTF-16 code units: `\uXXXX` escapes, 6 bytes per unit, plus 2 quotes;
 * - a finite number: 25 characters (`-2.2250738585072014e-308` is 24);
 * - a key of the schema with its quotes, colon and comma: 21 (`transactionNumber` is 17 long);
 * - the braces: 2.
 * The fields are read by name, not enumerated: the record is a wire record (only schema keys), and
 * a loop over its keys cost more than the rest of the bound in a process's first publish, before
 * the JIT has compiled it. An absent optional field, or one holding `undefined`, is not in the JSON.
 */

const KEY = 21;
const NUMBER = 25;
/** The braces, the six required keys, and the two numbers among them (created, amount). */
const REQUIRED = 2 + 6 * KEY + 2 * NUMBER;

const text = (value: string): number => 6 * value.length + 2;
const optionalText = (value: string | undefined): number => (value === undefined ? 0 : KEY + text(value));

export function recordJsonBound(record: FinanceRecord): number {
  return (
    REQUIRED +
    text(record.currency) +
    text(record.identifier) +
    text(record.type) +
    text(record.vendor) +
    optionalText(record.name) +
    optionalText(record.category) +
    optionalText(record.description) +
    optionalText(record.transactionNumber)
  );
}
