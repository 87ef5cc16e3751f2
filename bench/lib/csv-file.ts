/** The CSV input of the streaming benchmark: the rows of `financeRecord(i)`, written in chunks. */
import { financeRecord } from './records.js';
import type { TempFiles } from './temp-files.js';

export const CSV_HEADER = 'created,amount,currency,identifier,type,vendor,description';

function* csvChunks(rows: number): Generator<string> {
  yield `${CSV_HEADER}\n`;
  const perChunk = 10_000;
  for (let start = 0; start < rows; start += perChunk) {
    const lines: string[] = [];
    for (let i = start; i < Math.min(rows, start + perChunk); i++) {
      const r = financeRecord(i);
      lines.push(`${r.created},${r.amount},${r.currency},${r.identifier},${r.type},${r.vendor},${r.description}`);
    }
    yield `${lines.join('\n')}\n`;
  }
}

export function ensureCsv(temp: TempFiles, rows: number): Promise<string> {
  return temp.ensure(`records-${rows}.csv`, undefined, () => csvChunks(rows));
}
