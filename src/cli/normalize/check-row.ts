import { checkFinanceRecord, type FinanceRecord } from '../../index.js';
import type { RowIssue } from '../readers/types.js';
import { REQUIRED_FIELDS } from './fields.js';

/** What checking one candidate record says: every problem it has, not only the first. */
export type RowCheck = { ok: true; record: FinanceRecord } | { ok: false; issues: RowIssue[] };

const REQUIRED = new Set<string>(REQUIRED_FIELDS);

/**
 * Checks a candidate record with the SDK's public record check, adding the problems found while
 * reading it (`issues`, for fields the record then lacks). A required field the record lacks and
 * nothing reported yet is "missing"; a field already reported is not reported again as absent.
 */
export async function checkRow(record: Record<string, unknown>, issues: readonly RowIssue[] = []): Promise<RowCheck> {
  const check = await checkFinanceRecord(record);
  if (check.ok && issues.length === 0) return check;
  const reported = new Set(issues.map((issue) => issue.field));
  const all: RowIssue[] = [...issues];
  if (!check.ok) {
    for (const issue of check.issues) {
      if (reported.has(issue.path)) continue;
      const absent = REQUIRED.has(issue.path) && !Object.hasOwn(record, issue.path);
      all.push({ field: issue.path, message: absent ? 'missing' : issue.message });
    }
  }
  return { ok: false, issues: all };
}
