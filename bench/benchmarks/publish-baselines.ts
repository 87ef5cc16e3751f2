/**
 * What a user could write instead of the SDK: JSON.stringify plus global fetch, or raw
 * undici.request (the practical ceiling). Same batches, same concurrency, no validation; or, as
 * a user who checks records before sending them would, each record parsed with the package's own
 * zod schema (`push-api-client/schema`) and its output sent.
 */
import { request } from 'undici';
import type { FinanceRecordInput } from '../../src/finance/schema.js';
import { financeRecordSchema } from '../../src/schema.js';

export interface PlainPublish {
  url: string;
  token: string;
  records: readonly FinanceRecordInput[];
  batchSize: number;
  concurrency: number;
}

type Prepare = (records: readonly FinanceRecordInput[]) => readonly unknown[];

/** Worker loops share one cursor: `concurrency` requests in flight, no queue. */
async function inBatches(
  job: PlainPublish,
  send: (body: string) => Promise<void>,
  prepare: Prepare = (records) => records,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < job.records.length) {
      const start = next;
      next += job.batchSize;
      await send(JSON.stringify({ records: prepare(job.records.slice(start, start + job.batchSize)) }));
    }
  };
  await Promise.all(Array.from({ length: job.concurrency }, worker));
}

/** Each record through the zod schema; an invalid one stops the script, as a throw would. */
const parsedWithZod: Prepare = (records) => records.map((record) => financeRecordSchema.parse(record));

function headers(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
}

async function sendWithFetch(job: PlainPublish, body: string): Promise<void> {
  const response = await fetch(job.url, { method: 'POST', headers: headers(job.token), body });
  if (!response.ok) throw new Error(`fetch baseline: HTTP ${response.status}`);
  await response.json();
}

export function publishWithFetch(job: PlainPublish): Promise<void> {
  return inBatches(job, (body) => sendWithFetch(job, body));
}

/** The fetch script, with every record checked by zod first: a script that validates, as the SDK does. */
export function publishWithZodAndFetch(job: PlainPublish): Promise<void> {
  return inBatches(job, (body) => sendWithFetch(job, body), parsedWithZod);
}

export function publishWithUndici(job: PlainPublish): Promise<void> {
  return inBatches(job, async (body) => {
    const response = await request(job.url, { method: 'POST', headers: headers(job.token), body });
    if (response.statusCode !== 200) throw new Error(`undici baseline: HTTP ${response.statusCode}`);
    await response.body.json();
  });
}
