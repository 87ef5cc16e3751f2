/**
 * The floor of the streaming benchmark: a hand-written streaming script, the least a Node program
 * does to send a CSV in bounded memory. csv-parse reads the file as a stream, each row becomes a
 * record (no validation, no line tracking, no checkpoint), and batches of 1000 go out with
 * `JSON.stringify` and fetch, `concurrency` at a time. Usage: stream-publish.mjs <csv>
 * <concurrency>, with PUSH_* and BENCH_APP_ID in the environment. Prints `{ sent }`.
 */
import { createReadStream } from 'node:fs';
import { parse } from 'csv-parse';
import { appResource, fetchToken } from '../lib/script-env.js';

const [file = '', concurrencyText = '8'] = process.argv.slice(2);
const concurrency = Number(concurrencyText);
const url = appResource('finance');
const headers = { authorization: `Bearer ${await fetchToken()}`, 'content-type': 'application/json' };
const inFlight = new Set<Promise<void>>();
let sent = 0;

async function send(records: Record<string, string | number>[]): Promise<void> {
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ records }) });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  await response.arrayBuffer();
  sent += records.length;
}

function start(records: Record<string, string | number>[]): void {
  const request = send(records).finally(() => inFlight.delete(request));
  inFlight.add(request);
}

let batch: Record<string, string | number>[] = [];
for await (const row of createReadStream(file).pipe(parse({ columns: true }))) {
  const cells = row as Record<string, string>;
  const record: Record<string, string | number> = {};
  for (const name in cells) {
    const cell = cells[name] as string;
    record[name] = name === 'created' || name === 'amount' ? Number(cell) : cell;
  }
  batch.push(record);
  if (batch.length === 1000) {
    start(batch);
    batch = [];
    if (inFlight.size >= concurrency) await Promise.race(inFlight);
  }
}
if (batch.length > 0) start(batch);
await Promise.all(inFlight);
process.stdout.write(JSON.stringify({ sent }));
