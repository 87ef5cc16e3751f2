/**
 * The checked records of one publish run. In this order:
 * - the batches: each record checked and counted (`BatchSource`), the valid ones handed to the
 *   assembler (batcher.ts), the caller's input read one record at a time (`InputCursor`);
 * - the validation step (`checkRecord`, `prevalidate`): the fast check accepts the common case,
 *   and zod (schema.ts, loaded on first need) names the field of every other record;
 * - the fast check, derived from the table of fields (fields.ts).
 */
import type { InvalidRecord, RecordIssue } from '../errors.js';
import { abortErrorFrom, onAbort } from '../internal/waits.js';
import { type BatchAssembler, bodyBytesFor, type FittingSize, fitsByBound, sizeUp } from './batcher.js';
import { compileFastCheck } from './fast-check-compiler.js';
import {
  dateMs,
  FINANCE_FIELDS,
  type FieldSpec,
  type FieldTable,
  type FinanceRecord,
  isIsoDateOrDateTime,
  type TimeField,
  unknownKind,
} from './fields.js';
import type { PendingBatch, ReportBuilder } from './publisher.js';
import { type FinanceRecordSchema, toRecordIssues } from './schema.js';
import { loadFinanceRecordSchema } from './schema-loader.js';

// ── The batches ──────────────────────────────────────────────────────────────────────────────────
// The batches of one publish run, pulled by the engine's loops one at a time (publisher.ts), so that
// the input is read no further ahead than the window needs. Each record read is checked (the
// validation step, below) and counted: a valid one goes to the assembler, which fills batches; an
// invalid one goes to the report. The caller's iterator is read through an `InputCursor`.

/** Reasons to stop reading: an abort, an error that every further batch would meet, a callback that threw. */
type ShouldStop = () => boolean;

interface BatchSourceOptions {
  /** Most UTF-8 bytes in one request body: a record too large to be sent alone is invalid. */
  maxBatchBytes: number;
  /** Reading stops at the first invalid record (`onInvalid: 'throw'`). */
  stopAtInvalid: boolean;
}

export class BatchSource {
  readonly #assembler: BatchAssembler<FinanceRecord>;
  readonly #report: ReportBuilder;
  readonly #options: BatchSourceOptions;
  /** The input index of the next record read. */
  #nextRecord = 0;
  /** Set when `stopAtInvalid` met an invalid record: reading stopped there. */
  firstInvalid: InvalidRecord | undefined;
  /** Set when the input was read to its end, rather than reading being stopped. */
  readToEnd = false;

  constructor(assembler: BatchAssembler<FinanceRecord>, report: ReportBuilder, options: BatchSourceOptions) {
    this.#assembler = assembler;
    this.#report = report;
    this.#options = options;
  }

  /**
   * Reads the input one record at a time; an async input's reads are raced against the signal.
   * With `stopAtInvalid` reading stops at the first invalid record; records already read into
   * the unfinished batch are left to the caller to settle (`BatchAssembler.flush`).
   */
  async *fromInput(
    input: InputCursor,
    shouldStop: ShouldStop,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<PendingBatch, void, undefined> {
    // An array is read by index: its iterator's result objects cost more than checking a record
    // while the JIT has not compiled the loop yet, which is most of a short process's publish.
    const array = input.array;
    const { maxBatchBytes } = this.#options;
    for (let i = 0; ; i++) {
      let value: unknown;
      if (array) {
        if (i >= array.length) break;
        value = array[i];
      } else {
        // A sync input is read without an await per record: awaiting a value that is already
        // there costs a turn of the microtask queue each time.
        const next = input.isAsync ? await input.nextAsync(signal) : input.nextSync();
        if (next.done) break;
        value = next.value;
      }
      // The common case inline: a record the fast check accepts, far from any size limit, goes
      // into its batch with nothing built for it but its wire record.
      const record = checkFast(value);
      let batch: PendingBatch | undefined;
      if (record !== undefined) {
        const bound = recordJsonBound(record);
        const size = fitsByBound(bound, maxBatchBytes);
        batch =
          size !== undefined ? this.#add(record, size, undefined) : this.#take(sized(record, bound, maxBatchBytes));
      } else {
        let prepared = prepareUncertain(value, maxBatchBytes);
        if (prepared instanceof Promise) prepared = await prepared;
        batch = this.#take(prepared);
      }
      if (batch) yield batch;
      if (this.firstInvalid || shouldStop()) return;
    }
    this.readToEnd = true;
    const last = this.#assembler.flush();
    if (last) yield last;
  }

  /** Sends what `prevalidate` kept, letting go of each record as it is handed to a batch. */
  *fromPrepared(items: (SizedRecord | undefined)[], shouldStop: ShouldStop): Generator<PendingBatch, void, undefined> {
    for (let i = 0; i < items.length; i++) {
      const item = items[i] as SizedRecord;
      items[i] = undefined;
      const batch = this.#add(item.record, item.size, item.json);
      if (batch) yield batch;
      if (shouldStop()) return;
    }
    this.readToEnd = true;
    const last = this.#assembler.flush();
    if (last) yield last;
  }

  /** Counts one record read: into a batch (the batch it completed, if any), or into the report as invalid. */
  #take(prepared: PreparedRecord): PendingBatch | undefined {
    if (prepared.ok) return this.#add(prepared.record, prepared.size, prepared.json);
    const index = this.#nextRecord++;
    this.#report.read();
    const entry = this.#report.addInvalid(index, prepared.issues);
    if (this.#options.stopAtInvalid) this.firstInvalid ??= entry;
    return undefined;
  }

  /** Counts one valid record read, into a batch: the batch it completed, if any. */
  #add(record: FinanceRecord, size: FittingSize, json: string | undefined): PendingBatch | undefined {
    const index = this.#nextRecord++;
    this.#report.read();
    return this.#assembler.add(index, record, size, json);
  }
}

/**
 * The caller's iterator, read one record at a time and closed exactly once however publishing
 * ends, so that a database cursor or a file handle behind it is released (as `for...of` does on
 * `break`). Reads are pulled by hand rather than with `for await`, so that an abort does not wait
 * for an input that is slow, or never yields.
 */
export class InputCursor {
  readonly #iterator: Iterator<unknown> | AsyncIterator<unknown>;
  /** Done, threw, or closed: nothing left to close. */
  #finished = false;
  /** An async read still running (left behind by an abort). */
  #pending: Promise<unknown> | undefined;
  /**
   * One abort listener serves every read (a listener added and removed per record cost as much
   * as the rest of reading it); it rejects the read that is waiting, if any. Removed by `close`.
   */
  #abort: { signal: AbortSignal; stopListening: () => void } | undefined;
  #rejectWaiting: ((error: unknown) => void) | undefined;

  /** An async iterable's iterator: reads are awaited (`nextAsync`); otherwise `nextSync`. */
  readonly isAsync: boolean;
  /** The input itself when it is an array, which may be read by index instead (nothing to close). */
  readonly array: readonly unknown[] | undefined;

  constructor(records: Iterable<unknown> | AsyncIterable<unknown>) {
    this.array = Array.isArray(records) ? records : undefined;
    const openAsync = (records as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator];
    this.isAsync = typeof openAsync === 'function';
    this.#iterator = this.isAsync
      ? (openAsync as () => AsyncIterator<unknown>).call(records)
      : (records as Iterable<unknown>)[Symbol.iterator]();
  }

  /** The next record of a sync input. */
  nextSync(): IteratorResult<unknown> {
    try {
      const result = (this.#iterator as Iterator<unknown>).next();
      if (result.done) this.#finished = true;
      return result;
    } catch (error) {
      this.#finished = true; // an iterator that threw is done (ECMA-262: no return() after a throw)
      throw error;
    }
  }

  /** The next record of an async input; rejects with AbortError as soon as the signal fires. */
  nextAsync(signal: AbortSignal | undefined): Promise<IteratorResult<unknown>> {
    let read: Promise<IteratorResult<unknown>>;
    try {
      read = Promise.resolve(this.#iterator.next());
    } catch (error) {
      this.#finished = true;
      return Promise.reject(error);
    }
    // Noted before anyone else awaits the read, so that the notes are up to date when they resume.
    this.#pending = read;
    read.then(this.#onRead, this.#onReadFailed);
    // Without a signal, the iterator's own promise: no promise of ours per record.
    if (!signal) return read;
    if (signal.aborted) return Promise.reject(abortErrorFrom(signal));
    if (this.#abort?.signal !== signal) {
      this.#stopListening();
      const stopListening = onAbort(signal, () => this.#rejectWaiting?.(abortErrorFrom(signal)));
      this.#abort = { signal, stopListening };
    }
    return new Promise<IteratorResult<unknown>>((resolve, reject) => {
      this.#rejectWaiting = reject;
      read.then(
        (result) => {
          this.#rejectWaiting = undefined;
          resolve(result);
        },
        (error: unknown) => {
          this.#rejectWaiting = undefined;
          reject(error);
        },
      );
    });
  }

  /*
   * What a read's end tells: nothing pending any more (one read at a time: reading stops at an
   * abort), and the input finished when it ended or threw. Made once, not per read.
   */
  readonly #onRead = (result: IteratorResult<unknown>): void => {
    this.#pending = undefined;
    if (result.done) this.#finished = true;
  };

  readonly #onReadFailed = (): void => {
    this.#pending = undefined;
    this.#finished = true;
  };

  #stopListening(): void {
    this.#abort?.stopListening();
    this.#abort = undefined;
  }

  /**
   * Calls the iterator's `return()` once, unless it finished by itself. When an abort left a read
   * pending, `return()` is called but not awaited: an async generator runs it only after that
   * read, which may never come, while a hand-written iterator may use it to cancel the read.
   * An error from `return()` goes to `onError`; it never replaces the outcome of the run.
   */
  async close(onError: (error: unknown) => void): Promise<void> {
    this.#stopListening();
    if (this.#finished) return;
    this.#finished = true;
    const iterator = this.#iterator as { return?: () => unknown };
    if (typeof iterator.return !== 'function') return;
    try {
      const closing = Promise.resolve(iterator.return());
      if (this.#pending) closing.catch(onError);
      else await closing;
    } catch (error) {
      onError(error);
    }
  }
}

// ── The validation step ──────────────────────────────────────────────────────────────────────────
// Every record is checked here, and nowhere else. The fast check
// (below) accepts the common case; every other record goes to zod, so that issues name
// the field (`amount`) and say what was expected. A check is synchronous unless it needs zod
// before zod is loaded: then it loads zod (once per process; concurrent checks share the load)
// and answers when that is done. A valid record never needs zod, so a process that only
// publishes valid records, from an array or a stream, never loads it (its load is a large share
// of a short process's start-up, and its heap makes every collection slower).

/** A record accepted: its wire form (a new object, never the input) and a bound of its JSON size. */
interface AcceptedRecord {
  ok: true;
  record: FinanceRecord;
  /** At least the UTF-8 size of `JSON.stringify(record)`. */
  bound: number;
}

interface RefusedRecord {
  ok: false;
  issues: RecordIssue[];
}

export type RecordVerdict = AcceptedRecord | RefusedRecord;

/**
 * A checked record on its way into a batch, known to fit in a request alone: its wire form, its
 * size (see `FittingSize`), and its JSON when it had to be serialized to be measured.
 */
export interface SizedRecord {
  record: FinanceRecord;
  size: FittingSize;
  json: string | undefined;
}

/** A record checked and made ready for a batch, or why it cannot be sent. */
type PreparedRecord = ({ ok: true } & SizedRecord) | RefusedRecord;

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

/** Sizes up a valid record; refuses one that no request can carry, even alone: reported invalid, never dropped. */
function sized(record: FinanceRecord, bound: number, maxBatchBytes: number): PreparedRecord {
  const fit = sizeUp(record, bound, maxBatchBytes);
  if (fit.fits) return { ok: true, record, size: fit.size, json: fit.json };
  const message = `record is ${fit.bytes} bytes as JSON; a request body holding it alone would exceed maxBatchBytes (${maxBatchBytes})`;
  return { ok: false, issues: [{ path: '', message }] };
}

/** A verdict made ready for a batch: a valid record sized up, a refusal as it is. */
function sizedVerdict(verdict: RecordVerdict, maxBatchBytes: number): PreparedRecord {
  return verdict.ok ? sized(verdict.record, verdict.bound, maxBatchBytes) : verdict;
}

/** Checks a record the fast check did not accept, with zod, and sizes it up. Synchronous, unless zod must be loaded first. */
function prepareUncertain(input: unknown, maxBatchBytes: number): PreparedRecord | Promise<PreparedRecord> {
  if (schema !== undefined) return sizedVerdict(byZod(schema, input), maxBatchBytes);
  return loadSchema().then((loaded) => sizedVerdict(byZod(loaded, input), maxBatchBytes));
}

/** Checks a record and sizes it up for a batch. Synchronous, unless zod must be loaded first. */
function prepareRecord(input: unknown, maxBatchBytes: number): PreparedRecord | Promise<PreparedRecord> {
  const fast = checkFast(input);
  if (fast !== undefined) return sized(fast, recordJsonBound(fast), maxBatchBytes);
  return prepareUncertain(input, maxBatchBytes);
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
): Promise<{ items: SizedRecord[]; invalid: InvalidRecord[] }> {
  const items: SizedRecord[] = [];
  const invalid: InvalidRecord[] = [];
  // Most records fit with room to spare: the bound is enough, and nothing need be kept for them.
  const surelyFits = maxBatchBytes - bodyBytesFor(1, 0);
  const note = (prepared: PreparedRecord, index: number): void => {
    if (!prepared.ok) invalid.push({ index, issues: prepared.issues });
    else if (keepItems) items.push(prepared);
  };
  /** Judges one record; a promise only while zod loads. */
  const judge = (input: unknown, index: number): Promise<void> | undefined => {
    if (!keepItems) {
      const bound = scanFast(input);
      if (bound !== undefined && bound <= surelyFits) return undefined;
    }
    const prepared = prepareRecord(input, maxBatchBytes);
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

// ── The fast check ───────────────────────────────────────────────────────────────────────────────
// The common case of the zod schema's `safeParse`, without zod, derived from the same table of
// fields (fields.ts): the same rules, the same wire output, several times cheaper. It only ever
// says "valid, here is the wire record" or "ask zod": every record it does not accept goes through
// zod, which stays the source of truth and of every message. A zod parse costs about as much as
// sending the record; publishing millions of records would then be limited by validation.
//
// Rules, as zod applies them to a strict object of the table's fields (a property test checks
// that both agree on valid and mutated records): the input is a non-array object; each field is
// read once with `input[name]`, in the table's order, so inherited ones count; every other key
// that `for...in` yields is unknown; an optional field that is absent or `undefined` is left out
// of the wire record; the wire record has the fields in the table's order, so that its JSON is
// zod's output. The wire record is a new plain object: a getter or a Proxy that answers
// differently on each read cannot show the check one value and the request another.
//
// The check runs once per record, so it is compiled from the table into one function
// (fast-check-compiler.ts): no loop over the fields, no property written by a computed name, which
// cost several times the whole check. Where a runtime forbids compiling code from strings (a
// Worker, `--disallow-code-generation-from-strings`), the same rules run from the table directly.

/** A record's check and the bound of its JSON size. */
export interface FastCheck {
  /** The wire record when `input` is valid; `undefined` means "not certain: let zod decide and explain". */
  check(input: unknown): FinanceRecord | undefined;
  /** At least the UTF-8 size of `JSON.stringify(record)`, for a wire record (one the check made). */
  bound(record: FinanceRecord): number;
  /**
   * `bound(check(input))` without building the wire record, for a pass that keeps nothing (the
   * up-front check of an array). Its own code, not a call to `check`: a wire record that dies at
   * once and one that lives until its batch is sent, made at one allocation site, make V8's young
   * collections about twice as costly for the rest of the process.
   */
  scan(input: unknown): number | undefined;
}

/** A field's rule says this: not certain, let zod decide and explain. */
const REFUSED: unique symbol = Symbol('refused');
type Refused = typeof REFUSED;

function timeMs(field: TimeField, value: unknown): number | Refused {
  if (typeof value === 'number') {
    return Number.isSafeInteger(value) && value >= field.min && value <= field.max ? value : REFUSED;
  }
  if (typeof value === 'string') {
    if (!isIsoDateOrDateTime(value)) return REFUSED;
    const ms = Date.parse(value);
    // NaN passes, as in the schema (`ms < min` is false); the patterns leave no such string today.
    return ms < field.min ? REFUSED : ms;
  }
  if (value instanceof Date) {
    const ms = dateMs(value);
    return ms === undefined || Number.isNaN(ms) || ms < field.min ? REFUSED : ms;
  }
  return REFUSED;
}

/** A present value's wire form, or {@link REFUSED}. */
type ValueRule = (value: unknown) => unknown;

function valueRule(field: FieldSpec): ValueRule {
  switch (field.kind) {
    case 'time':
      return (value) => timeMs(field, value);
    case 'number':
      return (value) => (typeof value === 'number' && Number.isFinite(value) ? value : REFUSED);
    case 'enum': {
      const values: readonly unknown[] = field.values;
      return (value) => (values.includes(value) ? value : REFUSED);
    }
    case 'text': {
      const minLength = field.minLength ?? 0;
      const format = field.format?.test;
      return (value) =>
        typeof value === 'string' && value.length >= minLength && (format === undefined || format(value))
          ? value
          : REFUSED;
    }
    default:
      return unknownKind(field);
  }
}

/** Whether a field's wire value is a JSON string (else a number). */
function sendsText(field: FieldSpec): boolean {
  return field.kind === 'text' || field.kind === 'enum';
}

/*
 * The bound of a record's JSON size, without serializing it: batches far under `maxBatchBytes`
 * are filled from it, and only records near the limit are serialized and measured (batcher.ts).
 * Each part is the most JSON can take:
 * - a string of n UTF-16 code units: `\uXXXX` escapes, 6 bytes per unit, plus 2 quotes;
 * - a finite number: 25 characters (`-2.2250738585072014e-308` is 24);
 * - a field's name with its quotes, colon and comma;
 * - the braces: 2.
 */
const NUMBER_BYTES = 25;
const BRACES = 2;
const keyBytes = (name: string): number => JSON.stringify(name).length + 2;

const isRecordObject = (input: unknown): input is Record<string, unknown> =>
  typeof input === 'object' && input !== null && !Array.isArray(input);

/** The rules run from the table: the reference, and the check where code cannot be compiled. */
export function interpretedFastCheck(table: FieldTable = FINANCE_FIELDS): FastCheck {
  const fields = Object.values(table);
  const names = Object.keys(table);
  const required = fields.map((field) => field.required);
  const rules = fields.map((field) => valueRule(field));
  const count = names.length;
  const isName = (key: string): boolean => {
    for (let i = 0; i < count; i++) if (names[i] === key) return true;
    return false;
  };
  const check = (input: unknown): FinanceRecord | undefined => {
    if (!isRecordObject(input)) return undefined;
    for (const key in input) if (!isName(key)) return undefined;
    const out: Record<string, unknown> = {};
    for (let i = 0; i < count; i++) {
      const name = names[i] as string;
      const value = input[name];
      if (value === undefined) {
        if (required[i]) return undefined;
        continue;
      }
      const wire = (rules[i] as ValueRule)(value);
      if (wire === REFUSED) return undefined;
      out[name] = wire;
    }
    return out as FinanceRecord;
  };
  const bound = (record: FinanceRecord): number => {
    const values = record as Record<string, unknown>;
    let total = BRACES;
    for (const name of names) {
      const value = values[name];
      if (value === undefined) continue;
      total += keyBytes(name) + (typeof value === 'string' ? 6 * value.length + 2 : NUMBER_BYTES);
    }
    return total;
  };
  // The interpreted rules are the slow path already: the record built here costs little beside them.
  const scan = (input: unknown): number | undefined => {
    const record = check(input);
    return record === undefined ? undefined : bound(record);
  };
  return { check, bound, scan };
}

/** What the compiler needs of the rules above, handed in so that it imports nothing from here at run time. */
export interface RuleKit {
  refused: symbol;
  valueRule(field: FieldSpec): ValueRule;
  sendsText(field: FieldSpec): boolean;
  keyBytes(name: string): number;
  numberBytes: number;
  braces: number;
}

const KIT: RuleKit = { refused: REFUSED, valueRule, sendsText, keyBytes, numberBytes: NUMBER_BYTES, braces: BRACES };

/**
 * The rules compiled into one function each, or undefined where the runtime forbids compiling
 * code from strings, and always in the build for workers and edge runtimes, which forbid it.
 */
export function compiledFastCheck(table: FieldTable = FINANCE_FIELDS): FastCheck | undefined {
  return compileFastCheck(table, KIT);
}

const fastCheck = compiledFastCheck() ?? interpretedFastCheck();

/** See {@link FastCheck.check}. */
const checkFast = fastCheck.check;
/** See {@link FastCheck.bound}. */
export const recordJsonBound = fastCheck.bound;
/** See {@link FastCheck.scan}. */
const scanFast = fastCheck.scan;
