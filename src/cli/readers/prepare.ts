import type { RowTransform } from '../normalize/transform.js';
import type { RowRules, SourceRow } from './types.js';

function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

function isPromise(value: unknown): value is Promise<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/** Normalises a candidate record into a row: a record, or a rejection that still carries what could be read. */
function normalized(rules: RowRules, file: string, line: number, input: Record<string, unknown>): SourceRow {
  let result: ReturnType<RowRules['normalize']>;
  try {
    result = rules.normalize(input);
  } catch (error) {
    // A getter or a Proxy in what a transform returned: the row is invalid, the run goes on.
    const message = error instanceof Error ? error.message : String(error);
    return { kind: 'reject', file, line, issues: [{ field: '', message: `the record cannot be read: ${message}` }] };
  }
  if (result.issues.length > 0) return { kind: 'reject', file, line, issues: result.issues, record: result.record };
  return { kind: 'record', file, line, record: result.record };
}

/** One raw row through the transform: null skips it, a throw or a non-object makes it invalid. */
async function transformRow(transform: RowTransform, rules: RowRules, row: SourceRow): Promise<SourceRow> {
  if (row.kind !== 'record') return row;
  const { file, line } = row;
  let result: unknown;
  try {
    result = transform(row.record, { file, line });
    if (isPromise(result)) result = await result;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      kind: 'reject',
      file,
      line,
      issues: [{ field: '', message: `--transform: ${message}` }],
      source: row.record,
    };
  }
  if (result === null) return { kind: 'filtered', file, line };
  if (typeof result !== 'object' || result === undefined || Array.isArray(result)) {
    const message = `--transform returned ${describe(result)}; expected a record object, or null to skip the row`;
    return { kind: 'reject', file, line, issues: [{ field: '', message }], source: row.record };
  }
  return normalized(rules, file, line, result as Record<string, unknown>);
}

/**
 * The rows of one input made into candidate records. With `--transform`, each raw row goes through
 * it and what it returns is normalised (`--set`, `--date-format`, `--decimal`, the case of `type` and
 * `currency`). Without one, JSON objects are normalised here; CSV rows are normalised as they are
 * parsed, and do not come through here.
 */
export async function* transformed(chunks: AsyncGenerator<SourceRow[]>, rules: RowRules): AsyncGenerator<SourceRow[]> {
  const { transform } = rules;
  for await (const rows of chunks) {
    const out: SourceRow[] = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i] as SourceRow;
      if (transform !== undefined) out[i] = await transformRow(transform, rules, row);
      else out[i] = row.kind === 'record' ? normalized(rules, row.file, row.line, row.record) : row;
    }
    yield out;
  }
}
