/**
 * `push-api-client/schema`: the zod schema of a finance record, for callers who want to validate
 * or transform records themselves. It is a subpath of its own so that importing the client does
 * not load zod: `publish` loads it only when a record needs its messages.
 */
import { z } from 'zod';
import type { z as zm } from 'zod/mini';
import { buildFinanceRecordSchema } from './finance/schema.js';

export type { FinanceRecord, FinanceRecordInput } from './finance/schema.js';

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

/**
 * The classic zod type of {@link financeRecordSchema}. The schema is built with the functions that
 * classic zod shares with zod/mini (which the client loads), so it is a classic schema at run time
 * (`.extend`, `.pick`, `.optional()` work) while the builder is typed for zod/mini.
 */
export type FinanceRecordSchema = z.ZodObject<
  {
    created: z.ZodPipe<
      z.ZodCustom<number | Date | string, number | Date | string>,
      z.ZodTransform<number, number | Date | string>
    >;
    amount: z.ZodNumber;
    currency: z.ZodString;
    identifier: z.ZodString;
    type: z.ZodEnum<{ expense: 'expense'; invoice: 'invoice' }>;
    vendor: z.ZodString;
    name: z.ZodOptional<z.ZodString>;
    category: z.ZodOptional<z.ZodString>;
    description: z.ZodOptional<z.ZodString>;
    transactionNumber: z.ZodOptional<z.ZodString>;
  },
  z.core.$strict
>;
