import { Command, Option } from 'commander';
import { RECORD_FIELDS, type RecordField } from '../normalize/fields.js';
import { writeHumanRaw } from '../terminal-text.js';

/** One row that publishes as it is: every field filled, in the forms the CLI reads without options. */
const EXAMPLE: Record<RecordField, string | number> = {
  created: '2025-01-31T09:30:00Z',
  amount: 42.5,
  currency: 'EUR',
  identifier: 'jane@example.com',
  type: 'expense',
  vendor: 'Acme Office Supplies',
  name: 'Office chairs',
  category: 'office:furniture',
  description: 'Two chairs for the new room',
  transactionNumber: 'INV-2025-0042',
};

/** A CSV cell, quoted only when it must be. */
function csvCell(value: string | number): string {
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** The template's text: a header with every field and one example row, and no comment lines. */
export function templateText(format: 'csv' | 'jsonl'): string {
  if (format === 'jsonl') return `${JSON.stringify(EXAMPLE)}\n`;
  const header = RECORD_FIELDS.join(',');
  const row = RECORD_FIELDS.map((field) => csvCell(EXAMPLE[field])).join(',');
  return `${header}\n${row}\n`;
}

/** `push-api finance template`: a file to start from, which `finance publish` accepts as it is. */
export function templateCommand(): Command {
  return new Command('template')
    .description('print a CSV (or JSON Lines) file with every field and one example row, ready to publish')
    .addOption(new Option('--format <format>', 'csv or jsonl').choices(['csv', 'jsonl']).default('csv'))
    .action((flags: { format: 'csv' | 'jsonl' }) => {
      writeHumanRaw(process.stdout, templateText(flags.format));
    });
}
