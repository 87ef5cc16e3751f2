/**
 * The SDK side of the one-shot rows: a process that imports `push-api-client` (the built package,
 * as an installed user would), publishes once and exits, as a cron job or a CI step does. The
 * harness times the whole process. Usage: publish-once.mjs <count> <array|async> <quarter|all>
 * <concurrency>, with PUSH_* and BENCH_APP_ID in the environment. Prints `{ sent, importMs,
 * doneMs }`: the import's duration, and the time from the process's start to the publish's end.
 */
import { ONE_SHOT_BATCH_SIZE, parseOneShotArgs, recordArray, recordStream } from '../lib/one-shot-args.js';
import { env } from '../lib/script-env.js';

const importStarted = performance.now();
const { PushClient } = await import('push-api-client');
const importMs = performance.now() - importStarted;
const args = parseOneShotArgs(process.argv.slice(2));
const records = args.input === 'array' ? recordArray(args) : recordStream(args);
const client = new PushClient();
const report = await client.finance.publish(env('BENCH_APP_ID'), records, {
  batchSize: ONE_SHOT_BATCH_SIZE,
  concurrency: args.concurrency,
});
process.stdout.write(JSON.stringify({ sent: report.recordsSent, importMs, doneMs: performance.now() }));
