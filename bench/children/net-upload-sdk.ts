/**
 * The SDK side of the network upload rows: `client.uploads.upload` of the given files with every
 * option at its default, as a user who sets nothing would run it, through the delay proxy. Prints
 * `{ ms, bytes, peakInFlight, limitEvents, maxLimit }`: `ms` covers the upload call (token,
 * addresses, PUTs), the rest what its hooks saw of the in-flight window.
 * Usage: net-upload-sdk.mjs <file>..., with PUSH_* and BENCH_APP_ID in the environment.
 */
import { PushClient } from '../../src/client.js';
import { WindowRecorder } from '../lib/window-trace.js';

const files = process.argv.slice(2);
const recorder = new WindowRecorder('upload');
const client = new PushClient({ hooks: recorder.hooks() });
const appId = process.env.BENCH_APP_ID ?? 'bench-app';
recorder.start();
const started = performance.now();
const report = await client.uploads.upload(appId, files);
const ms = performance.now() - started;
if (report.filesFailed > 0) {
  const failure = report.files.find((file) => file.status === 'failed');
  throw new Error(`${report.filesFailed} upload(s) failed: ${failure?.error?.message ?? 'unknown'}`);
}
const limits = recorder.trace().limit.map((point) => point.limit);
process.stdout.write(
  JSON.stringify({
    ms,
    bytes: report.bytesUploaded,
    peakInFlight: recorder.peakInFlight,
    limitEvents: recorder.limitEvents,
    maxLimit: limits.length > 0 ? Math.max(...limits) : null,
  }),
);
