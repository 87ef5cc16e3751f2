/**
 * The floor of the upload benchmark: what a hand-written script gets from Node's own `fetch`, the
 * transport the SDK uses (it must, so that msw sees uploads in users' tests). It does what
 * `upload()` does on the wire and nothing else: a token request, one address request, then each
 * file PUT with Content-Length from a web stream of 1 MiB disk reads, `concurrency` at a time. No
 * checks, retries, timeouts or progress. Prints `{ ms, bytes }`, `ms` measured as the SDK child
 * measures it. Usage: upload-fetch.mjs <concurrency> <file>..., with PUSH_* and BENCH_APP_ID set.
 */
import { open, stat } from 'node:fs/promises';
import path from 'node:path';
import { appResource, fetchToken } from '../lib/script-env.js';

const CHUNK = 1024 * 1024;

/** A file's bytes, read on demand in 1 MiB chunks. */
async function fileStream(file: string, size: number): Promise<ReadableStream<Uint8Array>> {
  const handle = await open(file, 'r');
  let position = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const length = Math.min(CHUNK, size - position);
        if (length === 0) {
          await handle.close();
          controller.close();
          return;
        }
        const buffer = Buffer.allocUnsafe(length);
        const { bytesRead } = await handle.read(buffer, 0, length, position);
        position += bytesRead;
        controller.enqueue(buffer.subarray(0, bytesRead));
      },
      cancel: () => handle.close(),
    },
    { highWaterMark: 0 },
  );
}

const [concurrencyText = '4', ...files] = process.argv.slice(2);
const started = performance.now();
const bearer = await fetchToken();
const names = files.map((file) => path.basename(file));
const query = new URLSearchParams(names.map((name) => ['filenames', name]));
const addressesResponse = await fetch(`${appResource('upload')}?${query}`, {
  headers: { authorization: `Bearer ${bearer}` },
});
const addresses = (await addressesResponse.json()) as Record<string, string>;
let next = 0;
let bytes = 0;
const worker = async (): Promise<void> => {
  while (next < files.length) {
    const index = next++;
    const file = files[index] as string;
    const { size } = await stat(file);
    const response = await fetch(
      addresses[names[index] as string] as string,
      {
        method: 'PUT',
        headers: { 'content-length': String(size) },
        body: await fileStream(file, size),
        duplex: 'half',
        redirect: 'error',
      } as RequestInit,
    );
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    await response.arrayBuffer();
    bytes += size;
  }
};
await Promise.all(Array.from({ length: Number(concurrencyText) }, worker));
process.stdout.write(JSON.stringify({ ms: performance.now() - started, bytes }));
