/**
 * The finance record of SPEC.md ("Resources and their fields → Finance record"), declared once.
 * Everything that knows the record's fields is derived from {@link FINANCE_FIELDS}: the zod schema
 * (schema.ts), the zod-free check that accepts the common case (batch-source.ts), the bound of a
 * record's JSON size (same file), the record types below, and the CLI's list of required columns.
 * Adding an optional field is one entry here.
 *
 * This module loads no zod, so that importing the client does not: zod is loaded only when a
 * record needs its messages (batch-source.ts).
 */

/**
 * The earliest time accepted, in every form (1973-03-03T09:46:40Z). Numbers below it are almost
 * always Unix seconds, not milliseconds; Dates and strings get the same floor so that a record is
 * accepted or refused whatever form its time takes.
 */
const MIN_TIME_MS = 100_000_000_000;
/** The largest time a JavaScript Date can hold (ECMA-262 §21.4.1.1). */
const MAX_TIME_MS = 8_640_000_000_000_000;

/**
 * An ISO-8601 calendar date (2024-01-31), leap years included: the pattern of zod's `z.iso.date()`
 * (test/finance/lazy-schema.test.ts checks that they stay the same).
 */
export const ISO_DATE_PATTERN =
  /^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|(?:02)-(?:0[1-9]|1\d|2[0-8])))$/;

/**
 * An ISO-8601 date-time with `Z` or an offset (2024-01-31T09:30:00Z): the pattern of zod's
 * `z.iso.datetime({ offset: true })`. A local time without a zone would be shifted by the sender's
 * time zone, so it is refused.
 */
export const ISO_DATE_TIME_PATTERN =
  /^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|(?:02)-(?:0[1-9]|1\d|2[0-8])))T(?:(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:Z|([+-](?:[01]\d|2[0-3]):[0-5]\d)))$/;

/** Whether `value` is an ISO date or date-time string that a time field accepts. */
export function isIsoDateOrDateTime(value: string): boolean {
  return ISO_DATE_PATTERN.test(value) || ISO_DATE_TIME_PATTERN.test(value);
}

/**
 * The Unix milliseconds of a Date, or undefined for an object that only looks like one (made with
 * `Object.create(Date.prototype)`, or a Proxy over a Date), whose `getTime` throws: such a value
 * is refused as invalid rather than failing the whole check.
 */
export function dateMs(value: Date): number | undefined {
  try {
    return Date.prototype.getTime.call(value);
  } catch {
    return undefined;
  }
}

/**
 * A rule on a text field's characters. zod checks `pattern`; the fast check calls `test`, which
 * must accept exactly the same strings (the fast check's property test compares the two) and
 * costs less than a regex on every record.
 */
export interface TextFormat {
  readonly pattern: RegExp;
  readonly test: (value: string) => boolean;
  /** The message when `pattern` does not match. */
  readonly message: string;
}

const isUpperLetter = (code: number): boolean => code >= 65 && code <= 90; // A-Z

/** Format only: the service is the authority on which codes it accepts, and a built-in list goes stale. */
const CURRENCY_CODE: TextFormat = {
  pattern: /^[A-Z]{3}$/,
  test: (value) =>
    value.length === 3 &&
    isUpperLetter(value.charCodeAt(0)) &&
    isUpperLetter(value.charCodeAt(1)) &&
    isUpperLetter(value.charCodeAt(2)),
  message: 'expected an ISO 4217 code of three upper-case letters, such as "USD"',
};

interface FieldBase {
  /** A record without it is refused. An optional field that is absent or `undefined` is left out of the JSON. */
  readonly required: boolean;
  /** The message when the value has the wrong type. */
  readonly message: string;
}

/** A point in time: Unix milliseconds, a Date or an ISO-8601 string in, Unix milliseconds out. */
export interface TimeField extends FieldBase {
  readonly kind: 'time';
  /** The earliest and latest Unix milliseconds accepted. */
  readonly min: number;
  readonly max: number;
}

/** A finite number. */
export interface NumberField extends FieldBase {
  readonly kind: 'number';
}

/** A string, at least `minLength` UTF-16 code units long, and matching `format` when there is one. */
export interface TextField extends FieldBase {
  readonly kind: 'text';
  readonly minLength?: number;
  readonly format?: TextFormat;
}

/** One of a few strings. */
export interface EnumField extends FieldBase {
  readonly kind: 'enum';
  readonly values: readonly [string, ...string[]];
}

export type FieldSpec = TimeField | NumberField | TextField | EnumField;

/** Fields by name, in the order they are sent. */
export type FieldTable = Readonly<Record<string, FieldSpec>>;

/**
 * The fields of a finance record, in the order they are sent. The spec's property table is
 * authoritative: it names `vendor`; the spec's request schematic also shows `merchant`, which is
 * refused with a message pointing to `vendor` (see {@link unknownPropertyMessage}) so that data is
 * never sent under a name the service ignores. Any property not listed here is refused, so that a
 * typo is not dropped silently. The comment on each entry is the documentation of the field in
 * the record types.
 */
export const FINANCE_FIELDS = {
  /** When the transaction happened: Unix milliseconds, a Date, or an ISO-8601 date or date-time with an offset. */
  created: {
    kind: 'time',
    required: true,
    min: MIN_TIME_MS,
    max: MAX_TIME_MS,
    message: 'expected Unix milliseconds (number), a Date or an ISO-8601 date or date-time string',
  },
  /** The amount, a finite number. */
  amount: { kind: 'number', required: true, message: 'expected a finite number' },
  /** ISO 4217 code, such as `USD`. */
  currency: {
    kind: 'text',
    required: true,
    format: CURRENCY_CODE,
    message: 'expected an ISO 4217 code such as "USD"',
  },
  /** Who or what executed the transaction, such as a user's e-mail. */
  identifier: {
    kind: 'text',
    required: true,
    minLength: 1,
    message: 'expected who or what executed the transaction (a non-empty string)',
  },
  /** Whether the transaction is an expense or an invoice. */
  type: { kind: 'enum', required: true, values: ['expense', 'invoice'], message: 'expected "expense" or "invoice"' },
  /** Name of the vendor where the transaction took place. */
  vendor: { kind: 'text', required: true, minLength: 1, message: 'expected the vendor name (a non-empty string)' },
  /** Name associated with the transaction. */
  name: { kind: 'text', required: false, message: 'expected a string' },
  /** Free text; may be a colon-separated hierarchy such as `software:saas`. */
  category: { kind: 'text', required: false, message: 'expected a string' },
  /** Description of the transaction. */
  description: { kind: 'text', required: false, message: 'expected a string' },
  /** Identifying number of the transaction. */
  transactionNumber: { kind: 'text', required: false, message: 'expected a string' },
} as const satisfies Record<string, FieldSpec>;

// Frozen, entries included: the fast check is compiled from the table when this module loads and
// zod's schema is built from it later, so a change in between would make them disagree.
for (const field of Object.values(FINANCE_FIELDS) as FieldSpec[]) {
  if (field.kind === 'enum') Object.freeze(field.values);
  if (field.kind === 'text' && field.format) Object.freeze(field.format);
  Object.freeze(field);
}
Object.freeze(FINANCE_FIELDS);

type Fields = typeof FINANCE_FIELDS;
type FieldName = keyof Fields;

/** The names of the fields, in the order they are sent. */
export const FIELD_NAMES = Object.keys(FINANCE_FIELDS) as readonly FieldName[];

/** One field of the finance record, as {@link financeRecordFields} lists it. */
export interface FinanceRecordField {
  readonly name: keyof FinanceRecordInput;
  /** A record without this field is refused. */
  readonly required: boolean;
}

/**
 * The fields of a finance record, in the order they are sent, each with whether a record needs
 * it: for a CSV template, a column mapping or a form. The rules of each field are those of
 * `checkFinanceRecord` and `financeRecordSchema`.
 *
 * @example
 * ```ts
 * import { financeRecordFields } from 'push-api-client';
 *
 * const template = financeRecordFields.map((field) => field.name).join(','); // a CSV header
 * declare const columns: readonly string[];
 * const missing = financeRecordFields.filter((field) => field.required && !columns.includes(field.name));
 * ```
 */
export const financeRecordFields: readonly FinanceRecordField[] = Object.freeze(
  FIELD_NAMES.map((name) => Object.freeze({ name, required: FINANCE_FIELDS[name].required })),
);

/** A kind the type system says cannot happen: a new kind must be handled where this is called before it compiles. */
export function unknownKind(field: never): never {
  throw new Error(`push-api-client: unknown field kind ${JSON.stringify(field)}`);
}

/** Message for a property the table does not list; `merchant` gets a pointer to `vendor`. */
export function unknownPropertyMessage(key: string): string {
  return key === 'merchant'
    ? 'unknown property: the spec names this field "vendor"; rename "merchant" to "vendor"'
    : 'unknown property (not in the finance record table)';
}

/** A field's value as users write it. */
type InputOf<F> = F extends { kind: 'time' }
  ? number | Date | string
  : F extends { kind: 'number' }
    ? number
    : F extends { kind: 'enum'; values: readonly (infer V)[] }
      ? V
      : string;

/** A field's value as it is sent. */
type WireOf<F> = F extends { kind: 'time' } ? number : InputOf<F>;

type RequiredName = { [K in FieldName]: Fields[K]['required'] extends true ? K : never }[FieldName];
type OptionalName = Exclude<FieldName, RequiredName>;

/** The record's fields as users write them, required then optional. */
type InputFields = { -readonly [K in keyof Fields as K extends RequiredName ? K : never]: InputOf<Fields[K]> } & {
  -readonly [K in keyof Fields as K extends OptionalName ? K : never]?: InputOf<Fields[K]> | undefined;
};

/** The record's fields as they are sent, required then optional. */
type WireFields = { -readonly [K in keyof Fields as K extends RequiredName ? K : never]: WireOf<Fields[K]> } & {
  -readonly [K in keyof Fields as K extends OptionalName ? K : never]?: WireOf<Fields[K]> | undefined;
};

/**
 * A finance record as accepted by `publish` (SPEC.md, "Finance record"): `created` may be Unix
 * milliseconds, a Date or an ISO-8601 string. Exactly `z.input` of the schema (a type test checks it).
 * Derived from the table of fields (shown here field by field).
 * @interface
 */
export type FinanceRecordInput = { [K in keyof InputFields]: InputFields[K] };

/**
 * A finance record as sent on the wire: `created` is Unix milliseconds. Exactly `z.output` of the
 * schema. Derived from the table of fields (shown here field by field).
 * @interface
 */
export type FinanceRecord = { [K in keyof WireFields]: WireFields[K] };
