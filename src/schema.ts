/**
 * `push-api-client/schema`: the zod schema of a finance record, for callers who want to validate
 * or transform records themselves. It is a subpath of its own so that importing the client does
 * not load zod: `publish` loads it only when a record needs its messages.
 */
import { z } from 'zod';
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
export const financeRecordSchema = buildFinanceRecordSchema(z);
