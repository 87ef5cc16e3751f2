/**
 * `push-api-client/schema`: the zod schema of a finance record, for callers who want to validate
 * or transform records themselves. It is a subpath of its own so that importing the client does
 * not load zod: `publish` loads it only when a record needs its messages.
 */
import { z } from 'zod';
import type { z as zm } from 'zod/mini';
import type { FINANCE_FIELDS } from './finance/fields.js';
import { buildFinanceRecordSchema } from './finance/schema.js';

export type { FinanceRecord, FinanceRecordInput } from './finance/fields.js';

/**
 * The zod schema of one finance record (SPEC.md, "Finance record"): input as users write it
 * (`created` as Unix milliseconds, a Date or an ISO-8601 string), output as it is sent.
 * `publish` applies the same rules.
 *
 * @example
 * ```ts
 * import { financeRecordSchema } from 'push-api-client/schema';
 * const result = financeRecordSchema.safeParse(row);
 * if (!result.success) console.error(result.error.issues);
 * ```
 */
export const financeRecordSchema = buildFinanceRecordSchema(
  z as unknown as typeof zm,
) as unknown as FinanceRecordSchema;

/** The classic zod type of one field's value, from its entry in the table of fields. */
type ClassicFieldSchema<F> = F extends { kind: 'time' }
  ? z.ZodPipe<
      z.ZodCustom<number | Date | string, number | Date | string>,
      z.ZodTransform<number, number | Date | string>
    >
  : F extends { kind: 'number' }
    ? z.ZodNumber
    : F extends { kind: 'enum'; values: readonly (infer V extends string)[] }
      ? z.ZodEnum<{ [K in V]: K }>
      : z.ZodString;

type Fields = typeof FINANCE_FIELDS;

/**
 * The classic zod type of {@link financeRecordSchema}. The schema is built with the functions that
 * classic zod shares with zod/mini (which the client loads), so it is a classic schema at run time
 * (`.extend`, `.pick`, `.optional()` work) while the builder is typed for zod/mini. Derived from
 * the table of fields, like the schema itself.
 */
export type FinanceRecordSchema = z.ZodObject<
  {
    -readonly [K in keyof Fields]: Fields[K]['required'] extends true
      ? ClassicFieldSchema<Fields[K]>
      : z.ZodOptional<ClassicFieldSchema<Fields[K]>>;
  },
  z.core.$strict
>;
