import type { InvalidRecord, RecordIssue } from '../errors.js';
import { batchItem, bodyBytesFor, type FittingItem, fittingByBound, sizeUp } from './batcher.js';
import { checkFast, recordJsonBound, scanFast } from './fast-check.js';
import type { FinanceRecord } from './fields.js';
import { type FinanceRecordSchema, toRecordIssues } from './schema.js';
import { loadFinanceRecordSchema } from './schema-loader.js';

/**
 * The validation step: every record is checked here, and nowhere else. The fast check
 * (fast-check.ts) accepts the common case; every other record goes to zod, so that issues name
 * the field (`amount`) and say what was expected. A check is synchronous unless it needs zod
 * before zod is loaded: then it loads zod (once per process; concurrent checks share the load)
 * and answers when that is done. A valid record never needs zod, so a process that only
 * publishes valid records, from an array or a stream, never loads it (its load is a large share
 * of a short process's start-up, and its heap makes every collection slower).
 */

/** A record accepted: its wire form (a new object, never the input) and a bound of its JSON size. */
export interface AcceptedRecord {
  ok: true;
  record: FinanceRecord;
  /** At least the UTF-8 size of `JSON.stringify(record)`. */
  bound: number;
}

export interface RefusedRecord {
  ok: false;
  issues: RecordIssue[];
}

export type RecordVerdict = AcceptedRecord | RefusedRecord;

/** A record checked and made ready for a batch: an item that fits in a request alone, or why it cannot be sent. */
export type PreparedRecord = { ok: true; item: Item } | RefusedRecord;

/** A checked record on its way into a batch, known to fit in a request alone. */
export type Item = FittingItem<FinanceRecord>;

let schema: FinanceRecordSchema | undefined;
let loading: Promise<FinanceRecordSchema> | undefined;

/** Loads zod and builds the schema, once. Concurrent callers share one load; a failed load may be tried again. */
function loadSchema(): Promise<FinanceRecordSchema> {
  loading ??= loadFinanceRecordSchema().then(
    (built) => {
      schema = built;
      return built;
    },
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/** Whether zod has been loaded in this process (tests show that valid records never load it). */
export function recordSchemaLoaded(): boolean {
  return schema !== undefined;
}

function byZod(zod: FinanceRecordSchema, input: unknown): RecordVerdict {
  const result = zod.safeParse(input);
  if (!result.success) return { ok: false, issues: toRecordIssues(result.error.issues) };
  return { ok: true, record: result.data, bound: recordJsonBound(result.data) };
}

/**
 * Checks one record; reads each of its fields once per check that reads it (the fast check, then
 * zod if the fast check was not certain). Synchronous, unless zod must be loaded first.
 */
export function checkRecord(input: unknown): RecordVerdict | Promise<RecordVerdict> {
  const fast = checkFast(input);
  if (fast !== undefined) return { ok: true, record: fast, bound: recordJsonBound(fast) };
  if (schema !== undefined) return byZod(schema, input);
  return loadSchema().then((loaded) => byZod(loaded, input));
}

/** Refuses a record that no request can carry, even alone: reported invalid, never dropped. */
function sized(verdict: RecordVerdict, index: number, maxBatchBytes: number): PreparedRecord {
  if (!verdict.ok) return verdict;
  const fit = sizeUp(batchItem(index, verdict.record, verdict.bound), maxBatchBytes);
  if (fit.fits) return { ok: true, item: fit.item };
  const message = `record is ${fit.bytes} bytes as JSON; a request body holding it alone would exceed maxBatchBytes (${maxBatchBytes})`;
  return { ok: false, issues: [{ path: '', message }] };
}

/**
 * Checks record `index` and sizes it up for a batch. Synchronous, unless zod must be loaded first.
 * Most records are accepted by the fast check and far from any size limit: nothing is built for
 * them but the wire record and its batch item (this runs once per record).
 */
export function prepareRecord(
  input: unknown,
  index: number,
  maxBatchBytes: number,
): PreparedRecord | Promise<PreparedRecord> {
  const fast = checkFast(input);
  if (fast !== undefined) {
    const bound = recordJsonBound(fast);
    const item = fittingByBound(index, fast, bound, maxBatchBytes);
    if (item) return { ok: true, item };
    return sized({ ok: true, record: fast, bound }, index, maxBatchBytes);
  }
  if (schema !== undefined) return sized(byZod(schema, input), index, maxBatchBytes);
  return loadSchema().then((loaded) => sized(byZod(loaded, input), index, maxBatchBytes));
}

/**
 * Checks a whole sync input before anything is sent (`onInvalid: 'throw'`), so that the error
 * lists every bad record. `keepItems`: keep the prepared records for sending (each checked once),
 * for an iterable that cannot be read twice; an array is read again instead, so that only the
 * invalid entries are held.
 */
export async function prevalidate(
  records: Iterable<unknown>,
  maxBatchBytes: number,
  keepItems: boolean,
): Promise<{ items: Item[]; invalid: InvalidRecord[] }> {
  const items: Item[] = [];
  const invalid: InvalidRecord[] = [];
  // Most records fit with room to spare: the bound is enough, and nothing need be kept for them.
  const surelyFits = maxBatchBytes - bodyBytesFor(1, 0);
  const note = (prepared: PreparedRecord, index: number): void => {
    if (!prepared.ok) invalid.push({ index, issues: prepared.issues });
    else if (keepItems) items.push(prepared.item);
  };
  /** Judges one record; a promise only while zod loads. */
  const judge = (input: unknown, index: number): Promise<void> | undefined => {
    if (!keepItems) {
      const bound = scanFast(input);
      if (bound !== undefined && bound <= surelyFits) return undefined;
    }
    const prepared = prepareRecord(input, index, maxBatchBytes);
    if (prepared instanceof Promise) return prepared.then((settled) => note(settled, index));
    note(prepared, index);
    return undefined;
  };
  if (Array.isArray(records)) {
    // By index: an array iterator's result objects cost more than checking a record while the JIT
    // has not compiled the loop yet, which is most of a short process's publish.
    for (let i = 0; i < records.length; i++) {
      const loading = judge(records[i], i);
      if (loading) await loading;
    }
  } else {
    let index = 0;
    for (const input of records) {
      const loading = judge(input, index++);
      if (loading) await loading;
    }
  }
  return { items, invalid };
}
