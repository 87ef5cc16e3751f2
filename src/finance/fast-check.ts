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

/**
 * The common case of the zod schema's `safeParse`, without zod, derived from the same table of
 * fields (fields.ts): the same rules, the same wire output, several times cheaper. It only ever
 * says "valid, here is the wire record" or "ask zod": every record it does not accept goes through
 * zod, which stays the source of truth and of every message. A zod parse costs about as much as
 * sending the record; publishing millions of records would then be limited by validation.
 *
 * Rules, as zod applies them to a strict object of the table's fields (a property test checks
 * that both agree on valid and mutated records): the input is a non-array object; each field is
 * read once with `input[name]`, in the table's order, so inherited ones count; every other key
 * that `for...in` yields is unknown; an optional field that is absent or `undefined` is left out
 * of the wire record; the wire record has the fields in the table's order, so that its JSON is
 * zod's output. The wire record is a new plain object: a getter or a Proxy that answers
 * differently on each read cannot show the check one value and the request another.
 *
 * The check runs once per record, so it is compiled from the table into one function
 * (fast-check-compiler.ts): no loop over the fields, no property written by a computed name, which
 * cost several times the whole check. Where a runtime forbids compiling code from strings (a
 * Worker, `--disallow-code-generation-from-strings`), the same rules run from the table directly.
 */

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
export type ValueRule = (value: unknown) => unknown;

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
export const checkFast = fastCheck.check;
/** See {@link FastCheck.bound}. */
export const recordJsonBound = fastCheck.bound;
/** See {@link FastCheck.scan}. */
export const scanFast = fastCheck.scan;
