/**
 * The arguments of the one-shot publish children (bench/children/publish-once*.ts), shared so
 * that the SDK child and its baseline script read the same input in the same way.
 */
import { type OptionalFields, variedRecord } from './records.js';

export type InputKind = 'array' | 'async';

export interface OneShotArgs {
  count: number;
  input: InputKind;
  optional: OptionalFields;
  concurrency: number;
}

export const ONE_SHOT_BATCH_SIZE = 1000;

export function parseOneShotArgs(argv: readonly string[]): OneShotArgs {
  const [count = '', input = '', optional = '', concurrency = '8'] = argv;
  if (input !== 'array' && input !== 'async') throw new Error(`input must be array or async, got ${input}`);
  if (optional !== 'quarter' && optional !== 'all') throw new Error(`optional must be quarter or all, got ${optional}`);
  return { count: Number(count), input, optional, concurrency: Number(concurrency) };
}

export function oneShotArgv(args: OneShotArgs): string[] {
  return [String(args.count), args.input, args.optional, String(args.concurrency)];
}

/** The records as an array, built before publishing as a pipeline holding an export would. */
export function recordArray(args: OneShotArgs) {
  return Array.from({ length: args.count }, (_, i) => variedRecord(i, args.optional));
}

/** The records as a stream: each made when asked for, as a database cursor would hand them out. */
export async function* recordStream(args: OneShotArgs) {
  for (let i = 0; i < args.count; i++) yield variedRecord(i, args.optional);
}
