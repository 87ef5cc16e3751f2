import type { z } from 'zod/mini';
import type { RecordIssue } from '../errors.js';
import { CREATED_LIMITS, isIsoDateOrDateTime, unknownPropertyMessage } from './formats.js';

/**
 * The finance record of SPEC.md ("Resources and their fields → Finance record"). The property
 * table is authoritative: it names `vendor`; the spec's request schematic also shows `merchant`,
 * which is rejected with a message pointing to `vendor` so that data is never sent under a name
 * the service ignores. Unknown properties are rejected so that a typo is not dropped silently.
 *
 * The schema is built from a zod namespace handed in, rather than from a top-level import: the
 * client loads `zod/mini` only when a record needs it (validate.ts), while `push-api-client/schema`
 * builds it at once from classic `zod` for callers who want the schema itself. It is written with
 * the functions both APIs share (`z.optional(s)`, `.check(z.minLength(…))`, `z.pipe`), so that one
 * builder gives the same rules and messages from either; `zod/mini` keeps the Worker bundle small
 * (classic zod alone is over 400 kB minified).
 */

/** The zod functions the schema is built from; classic zod and zod/mini both have them. */
export type Zod = Pick<
  typeof z,
  'custom' | 'enum' | 'minLength' | 'number' | 'optional' | 'pipe' | 'regex' | 'strictObject' | 'string' | 'transform'
>;
const MIN_CREATED_MS = CREATED_LIMITS.min;
const MAX_CREATED_MS = CREATED_LIMITS.max;

/**
 * Unix milliseconds are never negative; the service refuses them (and with them the whole batch).
 * The floor is {@link MIN_CREATED_MS}, above 0, so that every form of `created` meets one rule.
 */
const TOO_EARLY_MESSAGE = `expected a time on or after ${new Date(MIN_CREATED_MS).toISOString()} (the earliest created accepted in any form)`;

const CREATED_MESSAGE = 'expected Unix milliseconds (number), a Date or an ISO-8601 date or date-time string';

function isCreatedInput(value: unknown): value is number | Date | string {
  return typeof value === 'number' || typeof value === 'string' || value instanceof Date;
}

/** `ctx.addIssue` of classic zod, which zod/mini's transform context lacks. */
function addIssue(ctx: z.core.ParsePayload, value: unknown, message: string): void {
  ctx.issues.push({ code: 'custom', message, input: value });
}

/** Turns any accepted form of `created` into Unix milliseconds, the wire form. */
function toCreatedMs(value: number | Date | string, ctx: z.core.ParsePayload): number {
  const issue = (message: string) => addIssue(ctx, value, message);
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value > MAX_CREATED_MS) {
      issue('expected whole Unix milliseconds');
    } else if (value < MIN_CREATED_MS) {
      issue(`expected Unix milliseconds; ${value} is before 1973-03-03 and looks like seconds (multiply by 1000)`);
    }
    return value;
  }
  if (value instanceof Date) {
    const ms = value.getTime();
    if (Number.isNaN(ms)) issue('expected a valid Date, got Invalid Date');
    else if (ms < MIN_CREATED_MS) issue(TOO_EARLY_MESSAGE);
    return ms;
  }
  if (!isIsoDateOrDateTime(value)) {
    issue('expected an ISO-8601 date (2024-01-31) or date-time with Z or an offset (2024-01-31T09:30:00Z)');
    return Number.NaN;
  }
  // Date.parse reads a date-only string as UTC midnight (ECMA-262 §21.4.3.2), which is what we want.
  const ms = Date.parse(value);
  if (ms < MIN_CREATED_MS) issue(TOO_EARLY_MESSAGE);
  return ms;
}

/** Builds the zod schema of one finance record: input as users write it, output as it is sent. */
export function buildFinanceRecordSchema(z: Zod) {
  const requiredText = (what: string) =>
    z
      .string({ error: `expected ${what} (a non-empty string)` })
      .check(z.minLength(1, { error: `expected ${what} (a non-empty string)` }));
  const optionalText = z.optional(z.string({ error: 'expected a string' }));
  const shape = {
    // A custom type check rather than z.union: a union costs more than the rest of the record together.
    created: z.pipe(
      z.custom<number | Date | string>(isCreatedInput, { error: CREATED_MESSAGE }),
      z.transform((value: number | Date | string, ctx) => toCreatedMs(value, ctx)),
    ),
    amount: z.number({ error: 'expected a finite number' }),
    /** Format only: the service is the authority on which codes it accepts, and a built-in list goes stale. */
    currency: z.string({ error: 'expected an ISO 4217 code such as "USD"' }).check(
      z.regex(/^[A-Z]{3}$/, {
        error: 'expected an ISO 4217 code of three upper-case letters, such as "USD"',
      }),
    ),
    identifier: requiredText('who or what executed the transaction'),
    type: z.enum(['expense', 'invoice'], { error: 'expected "expense" or "invoice"' }),
    vendor: requiredText('the vendor name'),
    name: optionalText,
    category: optionalText,
    description: optionalText,
    transactionNumber: optionalText,
  };
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code === 'unrecognized_keys')
        return issue.keys.map((key) => `${key}: ${unknownPropertyMessage(key)}`).join('; ');
      if (issue.code === 'invalid_type') return 'expected a finance record object';
      return undefined;
    },
  });
}

/** The zod/mini schema of one finance record, as `publish` loads it. */
export type FinanceRecordSchema = ReturnType<typeof buildFinanceRecordSchema>;
/**
 * A finance record as accepted by `publish` (SPEC.md, "Finance record"): `created` may be Unix
 * milliseconds, a Date or an ISO-8601 string. Exactly `z.input` of the schema (a type test checks it).
 */
export type FinanceRecordInput = {
  created: number | Date | string;
  amount: number;
  /** ISO 4217 code, such as `USD`. */
  currency: string;
  /** Who or what executed the transaction, such as a user's e-mail. */
  identifier: string;
  type: 'expense' | 'invoice';
  /** Name of the vendor where the transaction took place. */
  vendor: string;
  /** Name associated with the transaction. */
  name?: string | undefined;
  /** Free text; may be a colon-separated hierarchy such as `software:saas`. */
  category?: string | undefined;
  /** Description of the transaction. */
  description?: string | undefined;
  /** Identifying number of the transaction. */
  transactionNumber?: string | undefined;
};

/** A finance record as sent on the wire: `created` is Unix milliseconds. Exactly `z.output` of the schema. */
export type FinanceRecord = Omit<FinanceRecordInput, 'created'> & {
  created: number;
};

/** Flattens zod issues into `{ path, message }`, one per unknown key so every issue names its field. */
export function toRecordIssues(issues: readonly z.core.$ZodIssue[]): RecordIssue[] {
  const out: RecordIssue[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push({ path: key, message: unknownPropertyMessage(key) });
      continue;
    }
    out.push({ path: issue.path.map(String).join('.'), message: issue.message });
  }
  return out;
}
