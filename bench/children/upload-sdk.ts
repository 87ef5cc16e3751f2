/**
 * The measured side of the upload benchmark, in its own process so that its peak RSS is the SDK's:
 * `client.uploads.upload` of the given files to the sink. Prints `{ ms, bytes, uploaded }`, where
 * `ms` covers the upload call only (addresses, token and PUTs), not Node's startup.
 * Usage: upload-sdk.mjs <concurrency> <file>..., with PUSH_* and BENCH_APP_ID in the environment.
 */
import { PushClient } from '../../src/client.js';

const [concurrencyText = '4', ...files] = process.argv.slice(2);
const client = new PushClient();
const appId = process.env.BENCH_APP_ID ?? 'bench-app';
const started = performance.now();
const report = await client.uploads.upload(appId, files, { concurrency: Number(concurrencyText) });
const ms = performance.now() - started;
if (report.filesFailed > 0) {
  const failure = report.files.find((file) => file.status === 'failed');
  throw new Error(`${report.filesFailed} upload(s) failed: ${failure?.error?.message ?? 'unknown'}`);
}
process.stdout.write(JSON.stringify({ ms, bytes: report.bytesUploaded, uploaded: report.filesUploaded }));
