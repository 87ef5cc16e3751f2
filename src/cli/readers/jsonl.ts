import { splitLines } from './lines.js';
import { decodeUtf8, MAX_ROW_BYTES, type SourceRow } from './types.js';

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

function describe(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

/**
 * Streams JSON Lines: one JSON object per line. Blank lines are allowed and are not rows.
 * A line that is not valid UTF-8, not JSON, not an object, or longer than
 * {@link MAX_ROW_BYTES} becomes a rejection with its line number.
 */
export async function* readJsonl(source: AsyncIterable<Buffer | string>, file: string): AsyncGenerator<SourceRow> {
  for await (const raw of splitLines(source)) {
    const { line } = raw;
    if (raw.tooLong) {
      yield {
        kind: 'reject',
        file,
        line,
        issues: [{ field: '', message: `line is longer than ${MAX_ROW_BYTES} bytes` }],
      };
      continue;
    }
    const bytes = line === 1 && raw.bytes.subarray(0, 3).equals(UTF8_BOM) ? raw.bytes.subarray(3) : raw.bytes;
    const text = decodeUtf8(bytes);
    if (text === undefined) {
      yield { kind: 'reject', file, line, issues: [{ field: '', message: 'line is not valid UTF-8' }] };
      continue;
    }
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      yield { kind: 'reject', file, line, issues: [{ field: '', message: `invalid JSON: ${reason}` }] };
      continue;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      yield {
        kind: 'reject',
        file,
        line,
        issues: [{ field: '', message: `expected a JSON object, got ${describe(value)}` }],
      };
      continue;
    }
    yield { kind: 'record', file, line, record: value as Record<string, unknown> };
  }
}
