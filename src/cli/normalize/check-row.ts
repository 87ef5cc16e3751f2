import { checkFinanceRecord, type FinanceRecord, type FinanceRecordCheck } from '../../index.js';
import type { RowIssue } from '../readers/types.js';
import { REQUIRED_FIELDS } from './fields.js';

/** What checking one candidate record says: every problem it has, not only the first. */
export type RowCheck = { ok: true; record: FinanceRecord } | { ok: false; issues: RowIssue[] };

const REQUIRED = new Set<string>(REQUIRED_FIELDS);

/**
 * The problems of a candidate record: those found while reading it (`issues`, for fields the record
 * then lacks), then those of the SDK's record check. A required field the record lacks and nothing
 * reported yet is "missing"; a field already reported is not reported again as absent.
 */
export function rowIssues(
  record: Record<string, unknown>,
  check: FinanceRecordCheck,
  issues: readonly RowIssue[] = [],
): RowIssue[] {
  const reported = new Set(issues.map((issue) => issue.field));
  const all: RowIssue[] = [...issues];
  if (!check.ok) {
    for (const issue of check.issues) {
      if (reported.has(issue.path)) continue;
      const absent = REQUIRED.has(issue.path) && !Object.hasOwn(record, issue.path);
      all.push({ field: issue.path, message: absent ? 'missing' : issue.message });
    }
  }
  return all;
}

/** Checks a candidate record with the SDK's public record check; every problem it has, not only the first. */
export async function checkRow(record: Record<string, unknown>, issues: readonly RowIssue[] = []): Promise<RowCheck> {
  const check = await checkFinanceRecord(record);
  if (check.ok && issues.length === 0) return check;
  return { ok: false, issues: rowIssues(record, check, issues) };
}
