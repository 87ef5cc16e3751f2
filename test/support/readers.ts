/** The CLI's file readers one row at a time, as the tests read them (the CLI takes the chunks). */
import { type CsvReadOptions, readCsvChunks } from '../../src/cli/readers/csv.js';
import { readJsonChunks } from '../../src/cli/readers/json.js';
import { readJsonlChunks } from '../../src/cli/readers/jsonl.js';
import type { SourceRow } from '../../src/cli/readers/types.js';

async function* rowsOf(chunks: AsyncIterable<SourceRow[]>): AsyncGenerator<SourceRow> {
  for await (const rows of chunks) yield* rows;
}

/** The rows of a CSV file. */
export function readCsv(
  source: AsyncIterable<Buffer | string>,
  file: string,
  options: CsvReadOptions,
): AsyncGenerator<SourceRow> {
  return rowsOf(readCsvChunks(source, file, options));
}

/** The rows of a JSON file (an array of records, or `{"records": [...]}`). */
export function readJson(source: AsyncIterable<Buffer | string>, file: string): AsyncGenerator<SourceRow> {
  return rowsOf(readJsonChunks(source, file));
}

/** The rows of a JSON Lines file. */
export function readJsonl(source: AsyncIterable<Buffer | string>, file: string): AsyncGenerator<SourceRow> {
  return rowsOf(readJsonlChunks(source, file));
}
