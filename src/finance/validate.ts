import type { RecordIssue } from '../errors.js';
import { recordJsonBound } from './json-bound.js';
import { parseFinanceRecordFast } from './record-fast-path.js';
import { type FinanceRecord, type FinanceRecordSchema, toRecordIssues } from './schema.js';
import { loadFinanceRecordSchema } from './schema-loader.js';

/**
 * The record check: the fast path (record-fast-path.ts) for the records it accepts, zod for every
 * other one, so that issues name the field (`amount`) and say what was expected. zod is loaded on
 * first need: a valid record never needs it, so a process that only publishes valid records, from
 * an array or a stream, never loads it (its load is a large share of a short process's start-up,
 * and its heap makes every collection slower; bench/README.md has the figures).
 */

/** A record accepted: its wire form (a new object, never the input) and a bound of its JSON size. */
export interface AcceptedRecord {
  ok: true;
  record: FinanceRecord;
  /** At least the UTF-8 size of `JSON.stringify(record)` (json-bound.ts). */
  bound: number;
}

export interface RefusedRecord {
  ok: false;
  issues: RecordIssue[];
}

/**
 * What checking one record says. `'needs-schema'`: only zod can judge this record, and it is not
 * loaded; nothing was decided. Await `loadRecordSchema()`, then check the record again.
 */
export type RecordCheck = AcceptedRecord | RefusedRecord | 'needs-schema';

let schema: FinanceRecordSchema | undefined;
let loading: Promise<void> | undefined;

/** Loads zod and builds the schema, once. Concurrent callers share one load; a failed load may be tried again. */
export function loadRecordSchema(): Promise<void> {
  if (schema) return Promise.resolve();
  loading ??= loadFinanceRecordSchema().then(
    (built) => {
      schema = built;
    },
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/** Whether zod is loaded, so that `checkRecord` never answers `'needs-schema'`. */
export function recordSchemaLoaded(): boolean {
  return schema !== undefined;
}

/** Checks one record; reads each of its fields once per answer (see `parseFinanceRecordFast`). */
export function checkRecord(input: unknown): RecordCheck {
  const fast = parseFinanceRecordFast(input);
  if (fast !== undefined) return { ok: true, record: fast, bound: recordJsonBound(fast) };
  return checkWithSchema(input);
}

/** The check by zod alone, for a record the fast path did not accept. */
export function checkWithSchema(input: unknown): RecordCheck {
  if (schema === undefined) return 'needs-schema';
  const result = schema.safeParse(input);
  if (!result.success) return { ok: false, issues: toRecordIssues(result.error.issues) };
  return { ok: true, record: result.data, bound: recordJsonBound(result.data) };
}

/**
 * Whether `input` is surely valid with JSON of at most `maxJsonBytes` bytes, by the fast path
 * alone and keeping nothing: `false` means "not sure: ask `checkRecord`". For a pass over a whole
 * input before any of it is sent, where most records are valid and none is kept; the pass that
 * sends checks each record again, and sends what that check built.
 */
export function isSurelyValid(input: unknown, maxJsonBytes: number): boolean {
  const fast = parseFinanceRecordFast(input);
  return fast !== undefined && recordJsonBound(fast) <= maxJsonBytes;
}

/** `checkRecord` once `loadRecordSchema()` has completed. */
export function validateFinanceRecord(input: unknown): AcceptedRecord | RefusedRecord {
  const check = checkRecord(input);
  if (check !== 'needs-schema') return check;
  throw new Error('push-api-client: loadRecordSchema() must complete before zod validation');
}
