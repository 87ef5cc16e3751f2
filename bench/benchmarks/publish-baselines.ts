/**
 * What a user could write instead of the SDK: JSON.stringify plus global fetch, or raw
 * undici.request (the practical ceiling). Same batches, same concurrency, no validation.
 */
import { request } from 'undici';
import type { FinanceRecordInput } from '../../src/finance/schema.js';

export interface PlainPublish {
  url: string;
  token: string;
  records: readonly FinanceRecordInput[];
  batchSize: number;
  concurrency: number;
}

/** Worker loops share one cursor: `concurrency` requests in flight, no queue. */
async function inBatches(job: PlainPublish, send: (body: string) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < job.records.length) {
      const start = next;
      next += job.batchSize;
      await send(JSON.stringify({ records: job.records.slice(start, start + job.batchSize) }));
    }
  };
  await Promise.all(Array.from({ length: job.concurrency }, worker));
}

function headers(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
}

export function publishWithFetch(job: PlainPublish): Promise<void> {
  return inBatches(job, async (body) => {
    const response = await fetch(job.url, { method: 'POST', headers: headers(job.token), body });
    if (!response.ok) throw new Error(`fetch baseline: HTTP ${response.status}`);
    await response.json();
  });
}

export function publishWithUndici(job: PlainPublish): Promise<void> {
  return inBatches(job, async (body) => {
    const response = await request(job.url, { method: 'POST', headers: headers(job.token), body });
    if (response.statusCode !== 200) throw new Error(`undici baseline: HTTP ${response.statusCode}`);
    await response.body.json();
  });
}
