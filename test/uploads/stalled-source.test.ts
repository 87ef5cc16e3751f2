/**
 * A Node stream (or an async generator) that stops yielding in the middle of an upload: the caller's abort or the attempt's
 * timeout must end the upload, and the stream must be released, over real HTTP to the emulator.
 */
import { Readable } from 'node:stream';
import type { UploadReport } from 'push-api-client';
import { AbortError, PushError, TimeoutError, UploadError } from 'push-api-client';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';

let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startEmulator();
});
afterAll(async () => {
  await emulator.close();
});

/** Three bytes of the ten it declares, then nothing: `read()` never pushes again. */
function stalledStream(): Readable {
  const stream = new Readable({ read() {} });
  stream.push(Buffer.from('abc'));
  return stream;
}

describe('an upload whose stream stalls', () => {
  it("ends at the caller's abort and destroys the stream", async () => {
    const stream = stalledStream();
    const controller = new AbortController();
    const started = performance.now();
    const pending = clientFor(emulator).uploads.upload(
      emulator.mock.appId,
      [{ name: 'stalled.bin', stream, size: 10 }],
      // Aborted once its first bytes are on the way: the PUT is in flight, its body stalled.
      { signal: controller.signal, onProgress: (progress) => progress.bytes > 0 && controller.abort() },
    );
    const error = await pending.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(error).toBeInstanceOf(PushError);
    const file = ((error as PushError).report as UploadReport).files[0];
    expect(file?.error).toBeInstanceOf(UploadError);
    expect(file?.error?.cause).toBeInstanceOf(AbortError);
    expect(stream.destroyed).toBe(true);
    expect(emulator.mock.state.files(emulator.mock.appId)).toHaveLength(0);
  });

  it("ends at the attempt's timeout and destroys the stream", async () => {
    const stream = stalledStream();
    const started = performance.now();
    const outcome = await clientFor(emulator, { timeoutMs: 200 })
      .uploads.upload(emulator.mock.appId, [{ name: 'stalled.bin', stream, size: 10 }])
      .then(
        (report) => report,
        (thrown: unknown) => (thrown as PushError).report as UploadReport,
      );
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(outcome.files[0]?.status).toBe('failed');
    expect(outcome.files[0]?.error?.cause).toBeInstanceOf(TimeoutError);
    expect(stream.destroyed).toBe(true);
  });

  it('an async generator that never yields again does not hold the upload either', async () => {
    let closed = false;
    async function* stalled(): AsyncGenerator<Uint8Array> {
      try {
        yield new TextEncoder().encode('abc');
        await new Promise<never>(() => {});
      } finally {
        closed = true;
      }
    }
    const started = performance.now();
    const outcome = await clientFor(emulator, { timeoutMs: 200 })
      .uploads.upload(emulator.mock.appId, [{ name: 'stalled.bin', stream: stalled(), size: 10 }])
      .then(
        (report) => report,
        (thrown: unknown) => (thrown as PushError).report as UploadReport,
      );
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(outcome.files[0]?.status).toBe('failed');
    expect(outcome.files[0]?.error?.cause).toBeInstanceOf(TimeoutError);
    // Its `finally` cannot run: the generator is parked in an await that never settles.
    expect(closed).toBe(false);
  });
});
