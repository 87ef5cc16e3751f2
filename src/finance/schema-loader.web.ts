/**
 * The build for workers and edge runtimes imports the zod/mini functions the schema needs by name,
 * so that a Worker's bundler keeps only those, a small part of zod/mini. A Worker bundles
 * everything it may run anyway; being lazy gains it nothing.
 */
import {
  custom,
  enum as enumOf,
  minLength,
  number,
  optional,
  pipe,
  regex,
  strictObject,
  string,
  transform,
} from 'zod/mini';
import { buildFinanceRecordSchema, type FinanceRecordSchema } from './schema.js';

export async function loadFinanceRecordSchema(): Promise<FinanceRecordSchema> {
  return buildFinanceRecordSchema({
    custom,
    enum: enumOf,
    minLength,
    number,
    optional,
    pipe,
    regex,
    strictObject,
    string,
    transform,
  });
}
