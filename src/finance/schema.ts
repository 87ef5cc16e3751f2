import type { z } from 'zod/mini';
import type { RecordIssue } from '../errors.js';
import {
  dateMs,
  FINANCE_FIELDS,
  type FieldSpec,
  type FieldTable,
  type FinanceRecord,
  type FinanceRecordInput,
  isIsoDateOrDateTime,
  type TimeField,
  unknownKind,
  unknownPropertyMessage,
} from './fields.js';

/**
 * The zod schema of a finance record, built from the table of fields (fields.ts): zod is the
 * source of every message that explains a refusal.
 *
 * The schema is built from a zod namespace handed in, rather than from a top-level import: the
 * client loads `zod/mini` only when a record needs it (batch-source.ts), while `push-api-client/schema`
 * builds it at once from classic `zod` for callers who want the schema itself. It is written with
 * the functions both APIs share (`z.optional(s)`, `.check(z.minLength(…))`, `z.pipe`), so that one
 * builder gives the same rules and messages from either; `zod/mini` keeps the Worker bundle small
 * (classic zod alone is over 400 kB minified).
 */

export type { FinanceRecord, FinanceRecordInput } from './fields.js';

/** The zod functions the schema is built from; classic zod and zod/mini both have them. */
export type Zod = Pick<
  typeof z,
  'custom' | 'enum' | 'minLength' | 'number' | 'optional' | 'pipe' | 'regex' | 'strictObject' | 'string' | 'transform'
>;

/** The schema as `publish` uses it: input as users write it, output as it is sent. */
export type FinanceRecordSchema = z.ZodMiniType<FinanceRecord, FinanceRecordInput>;

type TimeInput = number | Date | string;

const isTimeInput = (value: unknown): value is TimeInput =>
  typeof value === 'number' || typeof value === 'string' || value instanceof Date;

/** `ctx.addIssue` of classic zod, which zod/mini's transform context lacks. */
function addIssue(ctx: z.core.ParsePayload, value: unknown, message: string): void {
  ctx.issues.push({ code: 'custom', message, input: value });
}

/** Turns any accepted form of a time into Unix milliseconds, the wire form, or notes why not. */
function timeToMs(field: TimeField, value: TimeInput, ctx: z.core.ParsePayload): number {
  const issue = (message: string) => addIssue(ctx, value, message);
  const floor = new Date(field.min).toISOString();
  // Unix milliseconds are never negative, and the service refuses them (and with them the whole
  // batch); every form meets the same floor, above 0.
  const tooEarly = `expected a time on or after ${floor} (the earliest created accepted in any form)`;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value > field.max) {
      issue('expected whole Unix milliseconds');
    } else if (value < field.min) {
      // As seconds, it must land after the floor too: 20251231 or 45657 are dates written as
      // numbers (YYYYMMDD, a spreadsheet's serial day), and times 1000 they are still 1970.
      issue(
        value * 1000 >= field.min
          ? `expected Unix milliseconds; ${value} is before ${floor.slice(0, 10)} and looks like seconds (multiply by 1000)`
          : `expected Unix milliseconds; ${value} is before ${floor.slice(0, 10)}, as seconds too: a date written as a number (20251231, or a spreadsheet's serial day such as 45657) is not a timestamp`,
      );
    }
    return value;
  }
  if (value instanceof Date) {
    const ms = dateMs(value);
    if (ms === undefined) {
      issue('expected a Date, got an object that only looks like one');
      return Number.NaN;
    }
    if (Number.isNaN(ms)) issue('expected a valid Date, got Invalid Date');
    else if (ms < field.min) issue(tooEarly);
    return ms;
  }
  if (!isIsoDateOrDateTime(value)) {
    issue('expected an ISO-8601 date (2024-01-31) or date-time with Z or an offset (2024-01-31T09:30:00Z)');
    return Number.NaN;
  }
  // Date.parse reads a date-only string as UTC midnight (ECMA-262 §21.4.3.2), which is what we want.
  const ms = Date.parse(value);
  if (ms < field.min) issue(tooEarly);
  return ms;
}

/** The zod schema of one field's value, present. */
function valueSchema(z: Zod, field: FieldSpec) {
  const error = field.message;
  switch (field.kind) {
    case 'time':
      // A custom type check rather than z.union: a union costs more than the rest of the record together.
      return z.pipe(
        z.custom<TimeInput>(isTimeInput, { error }),
        z.transform((value: TimeInput, ctx) => timeToMs(field, value, ctx)),
      );
    case 'number':
      return z.number({ error });
    case 'enum':
      return z.enum(field.values, { error });
    case 'text': {
      const checks = [];
      if (field.minLength !== undefined) checks.push(z.minLength(field.minLength, { error }));
      if (field.format) checks.push(z.regex(field.format.pattern, { error: field.format.message }));
      const text = z.string({ error });
      return checks.length > 0 ? text.check(...checks) : text;
    }
    default:
      return unknownKind(field);
  }
}

/** Builds the zod schema of one finance record from the table of fields. */
export function buildFinanceRecordSchema(z: Zod, table: FieldTable = FINANCE_FIELDS): FinanceRecordSchema {
  const shape: Record<string, z.ZodMiniType> = {};
  for (const [name, field] of Object.entries(table)) {
    const value = valueSchema(z, field);
    shape[name] = field.required ? value : z.optional(value);
  }
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code === 'unrecognized_keys')
        return issue.keys.map((key) => `${key}: ${unknownPropertyMessage(key)}`).join('; ');
      if (issue.code === 'invalid_type') return 'expected a finance record object';
      return undefined;
    },
  }) as unknown as FinanceRecordSchema;
}

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
