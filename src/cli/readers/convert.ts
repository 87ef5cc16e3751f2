import { columnKey } from '../normalize/columns.js';
import type { RecordField } from '../normalize/fields.js';
import type { RowIssue, SourceRow } from './types.js';

/**
 * `--map` applied to a JSON record: each key that a `--map` column names (case-insensitively, in
 * either Unicode form, ignoring surrounding spaces) is renamed to its field. A record holding both
 * the mapped key and the field it maps to is rejected rather than guessing which one counts.
 */
export function renameKeys(row: SourceRow, columnMap: ReadonlyMap<string, RecordField>): SourceRow {
  // columnMap is keyed by columnKey (byLowerCase).
  if (row.kind !== 'record') return row;
  const record: Record<string, unknown> = {};
  const issues: RowIssue[] = [];
  for (const [key, value] of Object.entries(row.record)) {
    const field = columnMap.get(columnKey(key.trim())) ?? key;
    if (Object.hasOwn(record, field)) {
      issues.push({ field, message: `"${field}" is given twice (once through --map)` });
      continue;
    }
    // defineProperty, not assignment: a "__proto__" key in the JSON stays a plain key.
    Object.defineProperty(record, field, { value, enumerable: true, writable: true, configurable: true });
  }
  if (issues.length > 0) return { kind: 'reject', file: row.file, line: row.line, issues };
  return { ...row, record };
}
