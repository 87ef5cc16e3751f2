/**
 * A caller's stream that upload() never read is closed by the time the call settles: the run
 * stopped before its file, or another input was refused. Publish closes its input the same way;
 * a stream left open would hold its file descriptor or socket for the rest of the process.
 */
import { Readable } from 'node:stream';
import { UploadError, UploadStoppedError } from 'push-api-client';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';

let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startEmulator();
});
afterEach(() => emulator.mock.reset());
afterAll(() => emulator.close());

const bytes = (text: string) => new TextEncoder().encode(text);

/** Three kinds of caller's stream, each telling whether it was closed unread. */
function streams() {
  const closed = { node: false, web: false, generator: false };
  const node = Readable.from([bytes('node')]);
  node.on('close', () => {
    closed.node = true;
  });
  const web = new ReadableStream<Uint8Array>({
    pull: (controller) => {
      controller.enqueue(bytes('web!'));
      controller.close();
    },
    cancel: () => {
      closed.web = true;
    },
  });
  // An async iterable over a resource of its own (a cursor, a socket): `return()` lets it go. (A
  // generator never started holds nothing: its `finally` would not run, and need not.)
  let sent = false;
  const iterable: AsyncIterable<Uint8Array> = {
    [Symbol.asyncIterator]: () => ({
      next: async () => {
        if (sent) return { done: true, value: undefined };
        sent = true;
        return { done: false, value: bytes('gen!') };
      },
      return: async () => {
        closed.generator = true;
        return { done: true, value: undefined };
      },
    }),
  };
  const inputs = [
    { name: 'node.txt', stream: node, size: 4 },
    { name: 'web.txt', stream: web, size: 4 },
    { name: 'gen.txt', stream: iterable, size: 4 },
  ];
  return { inputs, closed, node };
}

/** Lets the closes that are not synchronous (a Node stream's `close` event) happen. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('streams the upload did not read', () => {
  it('are closed when the run stops before their files: a Node stream destroyed, a web stream cancelled, an async iterable returned', async () => {
    const { inputs, closed, node } = streams();
    const error = await clientFor(emulator)
      .uploads.upload(emulator.mock.appId, [{ name: 'first.txt', data: 'first' }, ...inputs], {
        concurrency: 1,
        adaptive: false,
        onFileSettled: () => {
          throw new Error('stop after the first file');
        },
      })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UploadStoppedError);
    const report = (error as UploadStoppedError).report;
    expect(report.filesUploaded).toBe(1);
    expect(report.filesNotStarted).toBe(3);
    await settle();
    expect(closed).toEqual({ node: true, web: true, generator: true });
    expect(node.destroyed).toBe(true);
    expect(emulator.mock.state.files(emulator.mock.appId).map((file) => file.name)).toEqual(['first.txt']);
  });

  it('are closed when another input is refused before any request', async () => {
    const { inputs, closed } = streams();
    const error = await clientFor(emulator)
      .uploads.upload(emulator.mock.appId, [...inputs, { name: 'no-size.txt', stream: Readable.from([]) } as never])
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UploadError);
    expect((error as UploadError).message).toContain('no-size.txt');
    await settle();
    expect(closed).toEqual({ node: true, web: true, generator: true });
    expect(emulator.mock.state.requests).toHaveLength(0);
  });

  it('is closed when it is the input refused (no size, a size too large): the upload never reads it', async () => {
    for (const size of [undefined, -1, Number.MAX_SAFE_INTEGER]) {
      const refused = Readable.from([bytes('data')]);
      const error = await clientFor(emulator)
        .uploads.upload(emulator.mock.appId, [{ name: 'refused.txt', stream: refused, size } as never])
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(UploadError);
      await settle();
      expect(refused.destroyed).toBe(true);
    }
    expect(emulator.mock.state.requests).toHaveLength(0);
  });

  it('are closed when two inputs share a name, before any request', async () => {
    const { inputs, closed } = streams();
    const error = await clientFor(emulator)
      .uploads.upload(emulator.mock.appId, [...inputs, { name: 'node.txt', data: 'again' }])
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    await settle();
    expect(closed).toEqual({ node: true, web: true, generator: true });
    expect(emulator.mock.state.requests).toHaveLength(0);
  });

  it('leaves the streams it sent to the upload that read them: all three stored whole', async () => {
    const { inputs } = streams();
    const report = await clientFor(emulator).uploads.upload(emulator.mock.appId, inputs);
    expect(report.filesUploaded).toBe(3);
    const stored = Object.fromEntries(
      emulator.mock.state.files(emulator.mock.appId).map((file) => [file.name, new TextDecoder().decode(file.bytes)]),
    );
    expect(stored).toEqual({ 'node.txt': 'node', 'web.txt': 'web!', 'gen.txt': 'gen!' });
  });
});
