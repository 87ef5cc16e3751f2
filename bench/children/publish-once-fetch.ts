/**
 * The baseline of the one-shot rows: what a user could write instead of the SDK, run the same
 * way (one process, one publish, exit). A token request, then batches of 1000 with
 * `JSON.stringify` and fetch, `concurrency` in flight, reading the same array or stream. No
 * validation, retries or report. Usage and output as publish-once.mjs.
 */
import { ONE_SHOT_BATCH_SIZE, parseOneShotArgs, recordArray, recordStream } from '../lib/one-shot-args.js';
import { appResource, fetchToken } from '../lib/script-env.js';

const args = parseOneShotArgs(process.argv.slice(2));
const url = appResource('finance');
const headers = { authorization: `Bearer ${await fetchToken()}`, 'content-type': 'application/json' };
let sent = 0;

async function send(records: unknown[]): Promise<void> {
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ records }) });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  await response.arrayBuffer();
  sent += records.length;
}

/** Worker loops share one cursor over the input, as the SDK's do. */
async function publish(next: () => Promise<unknown[] | undefined>): Promise<void> {
  const worker = async (): Promise<void> => {
    for (let batch = await next(); batch; batch = await next()) await send(batch);
  };
  await Promise.all(Array.from({ length: args.concurrency }, worker));
}

if (args.input === 'array') {
  const records = recordArray(args);
  let start = 0;
  await publish(async () => {
    if (start >= records.length) return undefined;
    start += ONE_SHOT_BATCH_SIZE;
    return records.slice(start - ONE_SHOT_BATCH_SIZE, start);
  });
} else {
  const stream = recordStream(args);
  let done = false;
  let reading = Promise.resolve<unknown[] | undefined>(undefined);
  // One reader at a time: each batch is read after the previous one, as from a cursor.
  const readBatch = async (): Promise<unknown[] | undefined> => {
    if (done) return undefined;
    const batch: unknown[] = [];
    while (batch.length < ONE_SHOT_BATCH_SIZE) {
      const next = await stream.next();
      if (next.done) {
        done = true;
        break;
      }
      batch.push(next.value);
    }
    return batch.length > 0 ? batch : undefined;
  };
  await publish(() => {
    reading = reading.then(readBatch);
    return reading;
  });
}
process.stdout.write(JSON.stringify({ sent, doneMs: performance.now() }));
