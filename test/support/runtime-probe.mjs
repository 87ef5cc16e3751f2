/**
 * Run by Bun and Deno (test/net/bun-deno.e2e.test.ts) from the sources: uploads that each
 * runtime's own fetch sends differently from Node's, and what the runtime's own inspection shows of
 * a failed upload, and the emulator started in the runtime itself. Prints one JSON line, and must
 * end by itself (no `Deno.exit()`: nothing of the SDK or the emulator may keep the process alive).
 * Argument: `{ emulator, refusing, closedUrl, appId }`: the client options of an emulator and of a
 * service whose signed addresses point to a closed port, and an address nothing listens on.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PushClient } from '../../src/index.ts';
import { startEmulator } from '../../src/testing/index.ts';

/** One valid finance record, for the publishes below. */
const RECORD = {
  created: 1735689600000,
  amount: 1,
  currency: 'EUR',
  identifier: 'a@b.c',
  type: 'expense',
  vendor: 'V',
};

const { emulator, refusing, closedUrl, appId } = JSON.parse(globalThis.Deno ? Deno.args[0] : process.argv[2]);
const show = globalThis.Deno
  ? (value) => Deno.inspect(value, { depth: 10, showHidden: true })
  : (value) => Bun.inspect(value, { depth: 10 });

const dir = mkdtempSync(path.join(tmpdir(), 'runtime-probe-'));
const emptyPath = path.join(dir, 'empty-path.csv');
writeFileSync(emptyPath, '');
const out = {};
try {
  const client = new PushClient({ ...emulator, env: {}, maxRetries: 0 });
  const empty = await client.uploads.upload(appId, [
    { name: 'empty-string.csv', data: '' },
    { name: 'empty-bytes.bin', data: new Uint8Array(0) },
    { name: 'empty-blob.bin', data: new Blob([]) },
    { name: 'empty-stream.bin', stream: new Blob([]).stream(), size: 0 },
    emptyPath,
  ]);
  out.empty = empty.files.map((file) => `${file.name}: ${file.status}${file.error ? ` ${file.error.message}` : ''}`);

  const refused = new PushClient({ ...refusing, env: {}, maxRetries: 0, timeoutMs: 5000 });
  const outcome = await refused.uploads.upload(appId, [{ name: 'a.csv', data: 'x' }]).catch((error) => error);
  const report = outcome.report ?? outcome;
  out.refused = report.files.map((file) => file.status);
  out.shown = [show(outcome), show(report), show(report.files[0]?.error), JSON.stringify(report)].join('\n');

  // A data API that refuses the connection: nothing was sent, so the batch is failed, not unknown.
  const unreachable = new PushClient({ ...emulator, baseUrl: closedUrl, env: {}, maxRetries: 0 });
  const stopped = await unreachable.finance.publish(appId, [RECORD]).catch((error) => error);
  out.unreachable = {
    stopped: stopped.name,
    cause: stopped.cause?.message,
    failed: stopped.report?.recordsFailed,
    unknown: stopped.report?.recordsUnknown,
  };

  const own = await startEmulator();
  try {
    const ownClient = new PushClient({ ...own.clientOptions(), env: {} });
    const published = await ownClient.finance.publish(own.mock.appId, [RECORD]);
    const uploaded = await ownClient.uploads.upload(own.mock.appId, [{ name: 'é 😀.csv', data: 'x' }, emptyPath]);
    out.own = {
      sent: published.recordsSent,
      stored: uploaded.files.map((file) => `${file.name}: ${own.mock.state.file(own.mock.appId, file.name)?.size}`),
    };
  } finally {
    await own.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(JSON.stringify(out));
