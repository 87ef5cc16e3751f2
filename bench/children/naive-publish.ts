/**
 * The naive script of the streaming benchmark: read the whole CSV, turn every row into a record,
 * then send them in batches with JSON.stringify and fetch. Memory grows with the input; this is
 * what the CLI's streaming is compared with. Usage: naive-publish.mjs <csv> <concurrency>, with
 * PUSH_* and BENCH_APP_ID in the environment.
 */
import { readFile } from 'node:fs/promises';
import { appResource, fetchToken } from '../lib/script-env.js';

const [file = '', concurrencyText = '8'] = process.argv.slice(2);
const lines = (await readFile(file, 'utf8')).split('\n').filter((line) => line !== '');
const header = (lines.shift() ?? '').split(',');
const records = lines.map((line) => {
  const cells = line.split(',');
  const record: Record<string, string | number> = {};
  header.forEach((name, i) => {
    const cell = cells[i] ?? '';
    record[name] = name === 'created' || name === 'amount' ? Number(cell) : cell;
  });
  return record;
});

const url = appResource('finance');
const headers = { authorization: `Bearer ${await fetchToken()}`, 'content-type': 'application/json' };
let next = 0;
let sent = 0;
const worker = async (): Promise<void> => {
  while (next < records.length) {
    const start = next;
    next += 1000;
    const batch = records.slice(start, start + 1000);
    const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ records: batch }) });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    await response.arrayBuffer();
    sent += batch.length;
  }
};
await Promise.all(Array.from({ length: Number(concurrencyText) }, worker));
process.stdout.write(JSON.stringify({ sent }));
