/**
 * Loads zod/mini and builds the record schema, on first need (batch-source.ts). A dynamic import, so
 * that the client never loads zod for valid records. Its twin schema-loader.web.ts imports the
 * functions by name instead, because a bundler keeps every export of a dynamically imported module.
 */
import { buildFinanceRecordSchema, type FinanceRecordSchema } from './schema.js';

export async function loadFinanceRecordSchema(): Promise<FinanceRecordSchema> {
  const { z } = await import('zod/mini');
  return buildFinanceRecordSchema(z);
}
