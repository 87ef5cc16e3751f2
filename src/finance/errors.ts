/** The finance errors live in `src/errors.ts` with the rest of the family; kept for existing imports. */
export { PublishAbortedError, PublishInterruptedError } from '../errors.js';
