/**
 * The inputs of the real-exports benchmark: the same records written twice, once in the forms the
 * CLI reads without options (ISO 8601 date-times, plain amounts) and once as a European bank
 * exports them (`31.01.2024 09:30:00`, `12.345,67`), which needs `--date-format`, `--decimal` and
 * `--thousands`.
 */
import { financeRecord } from './records.js';
import type { TempFiles } from './temp-files.js';

export const EXPORT_HEADER = 'created,amount,currency,identifier,type,vendor,description';

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** Amounts up to 100,000.00, so that most of them need a thousands separator in the European form. */
function cents(i: number): number {
  return ((i * 7919) % 10_000_000) + 1;
}

function plainRow(i: number): string {
  const r = financeRecord(i);
  const created = new Date(r.created as number).toISOString().replace('.000Z', 'Z');
  const amount = `${Math.floor(cents(i) / 100)}.${pad(cents(i) % 100)}`;
  return `${created},${amount},${r.currency},${r.identifier},${r.type},${r.vendor},${r.description}`;
}

function europeanRow(i: number): string {
  const r = financeRecord(i);
  const d = new Date(r.created as number);
  const created = `${pad(d.getUTCDate())}.${pad(d.getUTCMonth() + 1)}.${d.getUTCFullYear()} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  const units = String(Math.floor(cents(i) / 100)).replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  // Quoted: the decimal comma would otherwise split the cell.
  return `${created},"${units},${pad(cents(i) % 100)}",${r.currency},${r.identifier},${r.type},${r.vendor},${r.description}`;
}

function* chunks(rows: number, row: (i: number) => string): Generator<string> {
  yield `${EXPORT_HEADER}\n`;
  const perChunk = 10_000;
  for (let start = 0; start < rows; start += perChunk) {
    const lines: string[] = [];
    for (let i = start; i < Math.min(rows, start + perChunk); i++) lines.push(row(i));
    yield `${lines.join('\n')}\n`;
  }
}

export function ensureExportCsv(temp: TempFiles, rows: number, shape: 'plain' | 'european'): Promise<string> {
  return temp.ensure(`export-${shape}-${rows}.csv`, undefined, () =>
    chunks(rows, shape === 'plain' ? plainRow : europeanRow),
  );
}

/** The options that read the European form. */
export const EUROPEAN_OPTIONS = ['--date-format', 'DD.MM.YYYY HH:mm:ss', '--decimal', ',', '--thousands', '.'];
