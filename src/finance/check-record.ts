import type { RecordIssue } from '../errors.js';
import { checkRecord } from './batch-source.js';
import type { FinanceRecord } from './fields.js';

/** What {@link checkFinanceRecord} says of one record. */
export type FinanceRecordCheck =
  /** Valid: `record` is the wire form that a publish would send (a new object, never the input). */
  | { ok: true; record: FinanceRecord }
  /** Invalid: each issue names its field, with the message a publish would report. */
  | { ok: false; issues: RecordIssue[] };

/**
 * Checks one finance record without sending it, by the same rules and with the same messages as
 * `publish` (so a form or an import step can refuse a record before any request is made). zod is
 * loaded only when the record is not plainly valid, as in `publish`.
 *
 * @example
 * ```ts
 * import { checkFinanceRecord } from 'push-api-client';
 *
 * const check = await checkFinanceRecord({ created: '2025-01-31', amount: 12.5, currency: 'eur' });
 * if (!check.ok) for (const issue of check.issues) console.warn(`${issue.path}: ${issue.message}`);
 * ```
 */
export async function checkFinanceRecord(input: unknown): Promise<FinanceRecordCheck> {
  return checkRecord(input);
}
