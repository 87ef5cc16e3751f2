import type { FastCheck, RuleKit } from './batch-source.js';
import type { FieldTable } from './fields.js';

/**
 * Workers and edge runtimes forbid compiling code from strings: the build for them runs the rules
 * of the table directly (`interpretedFastCheck`, batch-source.ts), and carries no compiler.
 */
export function compileFastCheck(_table: FieldTable, _kit: RuleKit): FastCheck | undefined {
  return undefined;
}
