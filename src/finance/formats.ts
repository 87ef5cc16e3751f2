/**
 * The rules of the finance record that need no zod, shared by the schema (schema.ts) and the
 * fast path (validate.ts), so that importing the client does not load zod: it is loaded only when
 * a record needs its messages (see `loadRecordSchema` in validate.ts).
 */

/**
 * The earliest `created` accepted, in every form (1973-03-03T09:46:40Z). Numbers below it are
 * almost always Unix seconds, not milliseconds; Dates and strings get the same floor so that a
 * record is accepted or refused whatever form its time takes.
 */
const MIN_CREATED_MS = 100_000_000_000;
/** The largest time a JavaScript Date can hold (ECMA-262 §21.4.1.1). */
const MAX_CREATED_MS = 8_640_000_000_000_000;
/** The bounds of `created` in Unix milliseconds. */
export const CREATED_LIMITS = { min: MIN_CREATED_MS, max: MAX_CREATED_MS } as const;

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

/** Whether `value` is an ISO date or date-time string that `created` accepts. */
export function isIsoDateOrDateTime(value: string): boolean {
  return ISO_DATE_PATTERN.test(value) || ISO_DATE_TIME_PATTERN.test(value);
}

/** Message for a property the table does not list; `merchant` gets a pointer to `vendor`. */
export function unknownPropertyMessage(key: string): string {
  return key === 'merchant'
    ? 'unknown property: the spec names this field "vendor"; rename "merchant" to "vendor"'
    : 'unknown property (not in the finance record table)';
}
