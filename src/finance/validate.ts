import type { RecordIssue } from '../errors.js';
import { CREATED_LIMITS, isIsoDateOrDateTime } from './formats.js';
import { buildFinanceRecordSchema, type FinanceRecord, type FinanceRecordSchema, toRecordIssues } from './schema.js';

/**
 * The common case of `financeRecordSchema.safeParse`, without zod: the same rules, the same wire
 * output, about ten times cheaper. It only ever says "valid, here is the wire record" or "ask zod":
 * every record it does not accept goes through zod, which stays the source of truth and of every
 * message. A zod parse costs about 1 µs, as much as sending the record; publishing millions of
 * records is then limited by validation, not by the service.
 *
 * Rules, as zod applies them to `financeRecordSchema` (a property test checks that both agree on
 * valid and mutated records): the input is a non-array object; each listed key is read with
 * `input[key]` and counts as present when `key in input` (inherited ones included); every other
 * key that `for...in` yields is unknown; an optional key that is present with `undefined` is kept
 * as `undefined`, an absent one stays absent; the output has the keys in the schema's order.
 */

/** The keys of the schema's shape; a `switch` on them is several times cheaper than a Set. */
function isKnownKey(key: string): boolean {
  switch (key) {
    case 'created':
    case 'amount':
    case 'currency':
    case 'identifier':
    case 'type':
    case 'vendor':
    case 'name':
    case 'category':
    case 'description':
    case 'transactionNumber':
      return true;
    default:
      return false;
  }
}

const isUpperLetter = (code: number): boolean => code >= 65 && code <= 90; // A-Z

/** `/^[A-Z]{3}$/`, the currency rule, without a regex. */
function isCurrencyCode(value: string): boolean {
  return (
    value.length === 3 &&
    isUpperLetter(value.charCodeAt(0)) &&
    isUpperLetter(value.charCodeAt(1)) &&
    isUpperLetter(value.charCodeAt(2))
  );
}

function createdMs(value: unknown): number | undefined {
  if (typeof value === 'number') {
    return Number.isSafeInteger(value) && value >= CREATED_LIMITS.min && value <= CREATED_LIMITS.max
      ? value
      : undefined;
  }
  if (typeof value === 'string') {
    if (!isIsoDateOrDateTime(value)) return undefined;
    const ms = Date.parse(value);
    // NaN passes, as in the schema (`ms < MIN` is false); the regexes leave no such string today.
    return ms < CREATED_LIMITS.min ? undefined : ms;
  }
  if (value instanceof Date) {
    const ms = value.getTime();
    return Number.isNaN(ms) || ms < CREATED_LIMITS.min ? undefined : ms;
  }
  return undefined;
}

const isOptionalText = (value: unknown): boolean => value === undefined || typeof value === 'string';
const isRequiredText = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

/**
 * The checks that decide the fast path's verdict, shared by `parseFinanceRecordFast` and
 * `inspectFinanceRecordFast` so that they cannot disagree: `created` in Unix milliseconds when
 * `record` is valid, `undefined` when only zod can tell. `keys` is the number of keys `for...in`
 * yields (all of them schema keys).
 */
function checkFields(record: Record<string, unknown>, keys: number, createdInput = record.created): number | undefined {
  if (keys < 0) return undefined;
  const created = createdMs(createdInput);
  if (created === undefined) return undefined;
  const amount = record.amount;
  if (typeof amount !== 'number' || !Number.isFinite(amount)) return undefined;
  const currency = record.currency;
  if (typeof currency !== 'string' || !isCurrencyCode(currency)) return undefined;
  if (!isRequiredText(record.identifier)) return undefined;
  const type = record.type;
  if (type !== 'expense' && type !== 'invoice') return undefined;
  if (!isRequiredText(record.vendor)) return undefined;
  if (
    !isOptionalText(record.name) ||
    !isOptionalText(record.category) ||
    !isOptionalText(record.description) ||
    !isOptionalText(record.transactionNumber)
  ) {
    return undefined;
  }
  return created;
}

/** The keys `for...in` yields, or -1 when one of them is not a schema key. */
function knownKeyCount(record: Record<string, unknown>): number {
  let count = 0;
  for (const key in record) {
    if (!isKnownKey(key)) return -1;
    count++;
  }
  return count;
}

const isRecordObject = (input: unknown): input is Record<string, unknown> =>
  typeof input === 'object' && input !== null && !Array.isArray(input);

/** The wire record when `input` is valid; `undefined` means "not certain: let zod decide and explain". */
export function parseFinanceRecordFast(input: unknown): FinanceRecord | undefined {
  if (!isRecordObject(input)) return undefined;
  const keys = knownKeyCount(input);
  if (keys < 0) return undefined;
  // Each field is read once, as zod reads it, and the checks look at the copy: a getter cannot
  // show the checks one value and the wire record another.
  const createdInput = input.created;
  const out: FinanceRecord = {
    created: 0,
    amount: input.amount as number,
    currency: input.currency as string,
    identifier: input.identifier as string,
    type: input.type as FinanceRecord['type'],
    vendor: input.vendor as string,
  };
  if ('name' in input) out.name = input.name as string | undefined;
  if ('category' in input) out.category = input.category as string | undefined;
  if ('description' in input) out.description = input.description as string | undefined;
  if ('transactionNumber' in input) out.transactionNumber = input.transactionNumber as string | undefined;
  const created = checkFields(out, keys, createdInput);
  if (created === undefined) return undefined;
  out.created = created;
  return out;
}

/** At least the UTF-8 size of a JSON string holding `value`: `\uXXXX` escapes take 6 bytes per code unit. */
const textBound = (value: string): number => 6 * value.length + 2;
/** An optional key as JSON: its quoted name, colon and comma take at most 21 bytes, a number 25. */
const optionalBound = (value: unknown): number => 21 + (typeof value === 'string' ? textBound(value) : 25);

/**
 * The fast path's verdict without building the wire record, for the hot path of `publish`:
 * - `0`: not certain; ask zod (exactly when `parseFinanceRecordFast` says `undefined`);
 * - `> 0`: valid, and `input` is its own wire record: a plain object (prototype `Object.prototype`
 *   or `null`, no `toJSON`) whose enumerable keys are exactly the schema keys it holds, with
 *   `created` already in Unix milliseconds, so `JSON.stringify(input)` is the wire JSON (keys may
 *   come in another order);
 * - `< 0`: valid, but the wire record is a copy (`parseFinanceRecordFast`).
 * The magnitude is at least the UTF-8 size of the wire JSON. The caller must also know that
 * `Object.prototype` holds no enumerable key (see `objectPrototypeIsClean`): `for...in` would count
 * such an inherited key, which `JSON.stringify` leaves out.
 */
export function inspectFinanceRecordFast(input: unknown): number {
  if (!isRecordObject(input)) return 0;
  const record = input;
  const keys = knownKeyCount(record);
  if (checkFields(record, keys) === undefined) return 0;
  // Six required keys (two numbers once on the wire: created, amount), each key at most 21 bytes with its quotes, colon and comma.
  let bytes =
    2 +
    6 * 21 +
    2 * 25 +
    textBound(record.currency as string) +
    textBound(record.identifier as string) +
    textBound(record.type as string) +
    textBound(record.vendor as string);
  let present = 6;
  if ('name' in record) {
    present++;
    bytes += optionalBound(record.name);
  }
  if ('category' in record) {
    present++;
    bytes += optionalBound(record.category);
  }
  if ('description' in record) {
    present++;
    bytes += optionalBound(record.description);
  }
  if ('transactionNumber' in record) {
    present++;
    bytes += optionalBound(record.transactionNumber);
  }
  // Every key that counts as present is one `for...in` yields (so none is inherited or hidden),
  // and JSON.stringify reads nothing else: no toJSON, no prototype of another kind.
  const proto: unknown = Object.getPrototypeOf(record);
  const asIs =
    keys === present &&
    typeof record.created === 'number' &&
    (proto === Object.prototype || proto === null) &&
    record.toJSON === undefined;
  return asIs ? bytes : -bytes;
}

/**
 * Whether `Object.prototype` has no enumerable key (nobody polluted it); `for...in` over a plain
 * object would yield such a key, which `JSON.stringify` leaves out.
 */
export function objectPrototypeIsClean(): boolean {
  for (const _key in Object.prototype) return false;
  return true;
}

export type ValidationResult = { ok: true; record: FinanceRecord } | { ok: false; issues: RecordIssue[] };

/**
 * zod, loaded on first need. A valid record never needs it (the fast path decides), so a process
 * that only uploads, fetches tokens, or publishes valid records from an async iterable (as the CLI
 * does) never loads it; an array or sync iterable loads it before its first record, because it is
 * batched in synchronous steps that cannot wait. zod and the schema add about 3 MB of live heap
 * and 12 MB of RSS, and that larger heap made V8 run a full collection every ~25 ms while an upload
 * churned through read buffers.
 */
let schema: FinanceRecordSchema | undefined;
let loading: Promise<void> | undefined;

/** Loads zod and builds the schema, once; `validateFinanceRecord` needs it for a record the fast path does not accept. */
export function loadRecordSchema(): Promise<void> {
  if (schema) return Promise.resolve();
  loading ??= import('zod').then(
    ({ z }) => {
      schema = buildFinanceRecordSchema(z);
    },
    (error: unknown) => {
      loading = undefined; // let a later call try again
      throw error;
    },
  );
  return loading;
}

/** Whether `validateFinanceRecord` can answer for any record now, without `loadRecordSchema`. */
export function recordSchemaLoaded(): boolean {
  return schema !== undefined;
}

/**
 * Validates one record with the finance record schema: the fast path for a valid record, zod for
 * the rest, so that issues name the field (`amount`) and say what was expected. `undefined` when
 * only zod can judge the record and it is not loaded yet: await `loadRecordSchema`, then ask again.
 */
export function validateFinanceRecordIfReady(input: unknown): ValidationResult | undefined {
  const record = parseFinanceRecordFast(input);
  return record !== undefined ? { ok: true, record } : validateWithSchema(input);
}

/** zod's verdict alone, for a record the fast path did not accept; `undefined` while zod is not loaded. */
export function validateWithSchema(input: unknown): ValidationResult | undefined {
  if (schema === undefined) return undefined;
  const result = schema.safeParse(input);
  if (result.success) return { ok: true, record: result.data };
  return { ok: false, issues: toRecordIssues(result.error.issues) };
}

/** `validateFinanceRecordIfReady` once `loadRecordSchema` has completed. */
export function validateFinanceRecord(input: unknown): ValidationResult {
  const result = validateFinanceRecordIfReady(input);
  if (result === undefined) throw new Error('push-api-client: loadRecordSchema() must complete before zod validation');
  return result;
}
