import { stat } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { UsageError } from '../exit-codes.js';

/** Where a raw row came from, for the transform. */
export interface TransformContext {
  file: string;
  /** As in rejects: a CSV header is line 1; JSON Lines start at 1. */
  line: number;
}

/**
 * A `--transform` module's function: a raw row in, a candidate record out, or null to skip the row.
 * A raw row is an object of strings keyed by header name (CSV), or the parsed object (JSON, JSONL).
 */
export type RowTransform = (
  row: Record<string, unknown>,
  context: TransformContext,
) => Record<string, unknown> | null | Promise<Record<string, unknown> | null>;

const EXTENSIONS = new Set(['.mjs', '.js', '.cjs']);

/**
 * Loads a transform module by path, resolved from the current directory. Its default export (or, for
 * CommonJS, `module.exports`) must be a function. Node decides whether a `.js` file is ESM or
 * CommonJS, by the nearest package.json. Any failure is a usage error naming `--transform`.
 */
export async function loadTransform(path: string): Promise<RowTransform> {
  const extension = extname(path).toLowerCase();
  if (!EXTENSIONS.has(extension)) {
    throw new UsageError(`--transform ${path}: expected a .mjs, .js or .cjs module`);
  }
  // Node's loader reads a module with a blocking read: a FIFO nobody writes to would hang the run
  // before it starts, and a device would never end.
  const info = await stat(path).catch((error: NodeJS.ErrnoException) => error);
  if (info instanceof Error) {
    const reason = info.code === 'ENOENT' ? 'no such file' : `cannot read it (${info.code ?? info.message})`;
    throw new UsageError(`--transform ${path}: ${reason}`);
  }
  if (!info.isFile()) throw new UsageError(`--transform ${path}: not a regular file`);
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(resolve(path)).href)) as Record<string, unknown>;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new UsageError(`--transform ${path}: the module cannot be loaded: ${reason}`);
  }
  let candidate = module.default;
  // `exports.default = fn` in CommonJS arrives as { default: { default: fn } }.
  if (typeof candidate === 'object' && candidate !== null && 'default' in candidate) {
    candidate = (candidate as { default: unknown }).default;
  }
  if (typeof candidate !== 'function') {
    throw new UsageError(
      `--transform ${path}: the module has no default export function (export default (row, context) => record)`,
    );
  }
  return candidate as RowTransform;
}
