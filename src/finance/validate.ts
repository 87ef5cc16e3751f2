import type { RecordIssue } from '../errors.js';
import {
  CREATED_LIMITS,
  type FinanceRecord,
  financeRecordSchema,
  isoDatePattern,
  isoDateTimePattern,
  toRecordIssues,
} from './schema.js';

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

/** The keys of `financeRecordShape`; a `switch` on them is several times cheaper than a Set. */
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
    if (!isoDatePattern.test(value) && !isoDateTimePattern.test(value)) return undefined;
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

/** The wire record when `input` is valid; `undefined` means "not certain: let zod decide and explain". */
export function parseFinanceRecordFast(input: unknown): FinanceRecord | undefined {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return undefined;
  const record = input as Record<string, unknown>;
  for (const key in record) if (!isKnownKey(key)) return undefined;
  const created = createdMs(record.created);
  if (created === undefined) return undefined;
  const amount = record.amount;
  if (typeof amount !== 'number' || !Number.isFinite(amount)) return undefined;
  const currency = record.currency;
  if (typeof currency !== 'string' || !isCurrencyCode(currency)) return undefined;
  const identifier = record.identifier;
  if (!isRequiredText(identifier)) return undefined;
  const type = record.type;
  if (type !== 'expense' && type !== 'invoice') return undefined;
  const vendor = record.vendor;
  if (!isRequiredText(vendor)) return undefined;
  const { name, category, description, transactionNumber } = record;
  if (
    !isOptionalText(name) ||
    !isOptionalText(category) ||
    !isOptionalText(description) ||
    !isOptionalText(transactionNumber)
  ) {
    return undefined;
  }
  const out: FinanceRecord = { created, amount, currency, identifier, type, vendor };
  if ('name' in record) out.name = name as string | undefined;
  if ('category' in record) out.category = category as string | undefined;
  if ('description' in record) out.description = description as string | undefined;
  if ('transactionNumber' in record) out.transactionNumber = transactionNumber as string | undefined;
  return out;
}

export type ValidationResult = { ok: true; record: FinanceRecord } | { ok: false; issues: RecordIssue[] };

/**
 * Validates one record with `financeRecordSchema`: the fast path for a valid record, zod for the
 * rest, so that issues name the field (`amount`) and say what was expected.
 */
export function validateFinanceRecord(input: unknown): ValidationResult {
  const record = parseFinanceRecordFast(input);
  if (record !== undefined) return { ok: true, record };
  const result = financeRecordSchema.safeParse(input);
  if (result.success) return { ok: true, record: result.data };
  return { ok: false, issues: toRecordIssues(result.error.issues) };
}
