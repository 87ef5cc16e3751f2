import type { RejectedRow } from './types.js';

/**
 * How deep a row read from JSON may nest. A finance record's fields are flat values; JSON.parse
 * accepts any depth, but a row nesting tens of thousands of arrays overflows the stack of every
 * recursive walk after it (JSON.stringify of its rejects line), so such a row is refused here,
 * like any other invalid row, and the run goes on.
 */
export const MAX_ROW_DEPTH = 32;

/**
 * The top-level field whose value nests deeper than {@link MAX_ROW_DEPTH}, or undefined. Walks
 * with its own stack, never deeper than the limit, so the walk itself cannot overflow.
 */
export function tooDeepField(record: Record<string, unknown>): string | undefined {
  for (const [field, value] of Object.entries(record)) {
    const stack: { value: unknown; depth: number }[] = [{ value, depth: 1 }];
    while (stack.length > 0) {
      const { value: item, depth } = stack.pop() as { value: unknown; depth: number };
      if (item === null || typeof item !== 'object') continue;
      if (depth >= MAX_ROW_DEPTH) return field;
      for (const child of Object.values(item)) stack.push({ value: child, depth: depth + 1 });
    }
  }
  return undefined;
}

/** The rejection of a row whose `field` nests too deep. */
export function tooDeepRow(file: string, line: number, field: string): RejectedRow {
  return {
    kind: 'reject',
    file,
    line,
    issues: [
      {
        field,
        message: `nested deeper than ${MAX_ROW_DEPTH} levels of arrays or objects; finance record fields are flat values`,
      },
    ],
  };
}
