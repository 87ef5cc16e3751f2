/**
 * The SDK side of the network cold-process row: a process that imports `push-api-client` (the
 * built package), publishes an array with every option at its default (batches of 1000, as the
 * baseline's), and exits. The harness
 * times the whole process. Usage: cold-publish-sdk.mjs <count>, with PUSH_* and BENCH_APP_ID set.
 * Prints `{ sent, doneMs, tokenLeavesMs, peakInFlight, limitEvents }`: when the publish ended and
 * how long after the call its token request left, both in ms since the process started.
 */
import { recordArray } from '../lib/one-shot-args.js';
import { env } from '../lib/script-env.js';
import { WindowRecorder } from '../lib/window-trace.js';

const { PushClient } = await import('push-api-client');
const count = Number(process.argv[2] ?? '5000');
const records = recordArray({ count, input: 'array', optional: 'quarter', concurrency: 0 });
const recorder = new WindowRecorder('finance');
const windowHooks = recorder.hooks();
let tokenLeavesAt = Number.NaN;
const client = new PushClient({
  hooks: {
    ...windowHooks,
    request: (event) => {
      if (event.operation === 'token' && Number.isNaN(tokenLeavesAt)) tokenLeavesAt = performance.now();
      windowHooks.request?.(event);
    },
  },
});
const calledAt = performance.now();
recorder.start();
const report = await client.finance.publish(env('BENCH_APP_ID'), records);
process.stdout.write(
  JSON.stringify({
    sent: report.recordsSent,
    doneMs: performance.now(),
    tokenLeavesMs: tokenLeavesAt - calledAt,
    peakInFlight: recorder.peakInFlight,
    limitEvents: recorder.limitEvents,
  }),
);
