import { UsageError } from '../exit-codes.js';
import type { RowIssue } from '../readers/types.js';
import type { AmountReader } from './amounts.js';
import type { DateReader } from './dates.js';
import type { RecordField } from './fields.js';

/** How the values of a row become the values of a record. */
export interface ValueRules {
  readDate: DateReader;
  readAmount: AmountReader;
  /** `--set`: constants for every row, already normalised. */
  sets: ReadonlyMap<RecordField, string>;
}

/** A row turned into a candidate record, with the problems met on the way (the record lacks those fields). */
export interface NormalizedRow {
  record: Record<string, unknown>;
  issues: RowIssue[];
}

/** The issues of a row that has none; shared, never written to. */
const NO_ISSUES: RowIssue[] = [];

function show(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}

/** Sets a key with defineProperty, so that a `__proto__` key from JSON stays a key (the record check then refuses it). */
function put(record: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
  } else record[key] = value;
}

/** What an amount's code or symbol says of the row's currency: the codes it may be, as written. */
interface AmountCurrency {
  codes: readonly string[];
  /** The one code is no ISO 4217 code (`BTC`, or a word such as `NET`): it must match the row's currency. */
  unlisted: boolean;
  text: string;
}

/**
 * One value: text is trimmed (an empty cell is left out, so that a required one is reported as
 * missing), `type` is lower-cased and `currency` upper-cased, and `created` and `amount` are read
 * by the run's formats. Returns what an amount's code or symbol says of its currency, if anything.
 */
function normalizeValue(
  rules: ValueRules,
  record: Record<string, unknown>,
  issues: RowIssue[],
  key: string,
  value: unknown,
): AmountCurrency | undefined {
  if (typeof value === 'string') {
    const text = value.trim();
    if (text === '') return undefined;
    switch (key) {
      case 'type':
        record.type = text.toLowerCase();
        return undefined;
      case 'currency':
        record.currency = text.toUpperCase();
        return undefined;
      case 'amount': {
        const amount = rules.readAmount(text);
        if (!amount.ok) issues.push({ field: 'amount', message: amount.message });
        else record.amount = amount.value;
        if (!amount.ok) return undefined;
        if (amount.currency !== undefined) return { codes: [amount.currency], unlisted: amount.unlisted, text };
        return amount.currencies === undefined ? undefined : { codes: amount.currencies, unlisted: false, text };
      }
      case 'created': {
        const created = rules.readDate(text);
        if (!created.ok) issues.push({ field: 'created', message: created.message });
        else record.created = created.ms;
        return undefined;
      }
      default:
        put(record, key, text);
        return undefined;
    }
  }
  if (key === 'created' && typeof value === 'number') {
    const created = rules.readDate(value);
    if (!created.ok) issues.push({ field: 'created', message: created.message });
    else record.created = created.ms;
    return undefined;
  }
  put(record, key, value);
  return undefined;
}

/**
 * A normaliser for candidate records: CSV cells keyed by field, a JSON object, or what a
 * `--transform` returned. `--set` values win over the row's own. A currency code in the amount, or a
 * symbol that stands for one currency (`€`), fills `currency` when the row has none; a code or
 * symbol that the row's currency is not makes the row invalid.
 */
export function recordNormalizer(rules: ValueRules): (input: Record<string, unknown>) => NormalizedRow {
  // --set values as they are written into each record, computed once: no Map iterator per row.
  const constants = [...rules.sets].map(([field, value]): [string, unknown] => [
    field,
    field === 'amount' || field === 'created' ? Number(value) : value,
  ]);
  // Problems are collected here and copied out only for a row that has some: most rows have none.
  const found: RowIssue[] = [];
  return (input) => {
    const record: Record<string, unknown> = {};
    const issues = found;
    issues.length = 0;
    let amountCurrency: AmountCurrency | undefined;
    for (const key in input) {
      if (!Object.hasOwn(input, key)) continue;
      const value = input[key];
      const first = key.charCodeAt(0);
      // A column that fills no field: its key starts with U+0001, which no trimmed header name can.
      if (first === 1) continue;
      // A column with no name in the header: its key starts with a NUL, for the same reason.
      if (first === 0) {
        if (typeof value === 'string' && value.trim() !== '') {
          issues.push({ field: '', message: `a column with no name in the header holds ${show(value)}` });
        }
        continue;
      }
      if (rules.sets.has(key as RecordField)) continue;
      const said = normalizeValue(rules, record, issues, key, value);
      if (said !== undefined) amountCurrency = said;
    }
    for (let i = 0; i < constants.length; i++) {
      const [field, value] = constants[i] as [string, unknown];
      record[field] = value;
    }
    if (amountCurrency !== undefined) {
      const { codes, unlisted } = amountCurrency;
      const currency = record.currency;
      if (currency === undefined) {
        if (unlisted) {
          issues.push({
            field: 'amount',
            message: `${JSON.stringify(amountCurrency.text)}: ${codes[0]} is no ISO 4217 code; if it is this row's currency, give it in the currency column (or --set currency=${codes[0]})`,
          });
        } else if (codes.length === 1) record.currency = codes[0];
      } else if (!codes.includes(currency as string)) {
        issues.push({
          field: 'currency',
          message: `the amount is in ${codes.join(' or ')}, the currency says ${typeof currency === 'string' ? currency : String(currency)}`,
        });
        delete record.currency;
      }
    }
    return { record, issues: issues.length === 0 ? NO_ISSUES : issues.splice(0) };
  };
}

/**
 * `--set` values, normalised once as a cell would be, so that a bad one (`--set amount=abc`) is a
 * usage error before anything is read. `created` and `amount` are kept as the numbers they read as.
 */
export function normalizeSets(
  sets: ReadonlyMap<RecordField, string>,
  readDate: DateReader,
  readAmount: AmountReader,
): Map<RecordField, string> {
  const out = new Map<RecordField, string>();
  const rules: ValueRules = { readDate, readAmount, sets: new Map() };
  for (const [field, value] of sets) {
    const record: Record<string, unknown> = {};
    const issues: RowIssue[] = [];
    const said = normalizeValue(rules, record, issues, field, value);
    if (issues.length > 0) throw new UsageError(`--set ${field}: ${issues[0]?.message}`);
    if (record[field] === undefined) throw new UsageError(`--set ${field}: the value is empty`);
    if (said !== undefined && said.codes.length > 0) {
      throw new UsageError(`--set amount: give the currency with --set currency=${said.codes.join(' or ')}`);
    }
    out.set(field, String(record[field]));
  }
  return out;
}
