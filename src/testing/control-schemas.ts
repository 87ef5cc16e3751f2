/** The bodies the control routes take, as zod schemas; loaded only when a control route is used. */
import { z } from 'zod';

const OPERATIONS = ['token', 'upload-urls', 'upload', 'finance'] as const;
const operation = z.enum(OPERATIONS);
/** A union's own message is only "Invalid input": a person needs the names it takes. */
const operationMessage = `expected one of ${OPERATIONS.join(', ')}, or a list of them`;

/** `FaultRule` as JSON: every field but `random` (a function); `times` may be `"Infinity"`. */
export const faultRuleSchema = z.strictObject({
  match: z
    .strictObject({
      operation: z.union([operation, z.array(operation).min(1).max(4)], { error: operationMessage }).optional(),
      method: z
        .string()
        .regex(/^[A-Za-z]{1,16}$/)
        .optional(),
      pathIncludes: z.string().max(2048).optional(),
    })
    .optional(),
  times: z
    .union([z.number().int().positive(), z.literal('Infinity').transform(() => Number.POSITIVE_INFINITY)])
    .optional(),
  probability: z.number().min(0).max(1).optional(),
  status: z.number().int().min(200).max(599).optional(),
  // A header value: printable ASCII only, as Headers would refuse anything else on every faulted answer.
  retryAfter: z.union([z.number().int().nonnegative(), z.string().regex(/^[\x20-\x7e]{1,64}$/)]).optional(),
  // The route caps the whole request body, so a string body needs no cap of its own.
  body: z.union([z.string(), z.record(z.string(), z.unknown())]).optional(),
  delayMs: z.number().nonnegative().max(600_000).optional(),
  drop: z.enum(['before', 'after']).optional(),
});

export const clockSchema = z.strictObject({ advanceMs: z.number().nonnegative().finite() });

export const resetSchema = z.strictObject({});
