import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, truncate, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { UploadError, type UploadInput } from 'push-api-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_UPLOAD_BYTES } from '../../src/uploads/limits.js';
import type { UploadSource } from '../../src/uploads/put-body.js';
import { toUploadSource } from '../../src/uploads/uploader.js';

let dir: string;
const content = Buffer.from(Array.from({ length: 700_000 }, (_, i) => (i * 31) % 251));
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

async function readAll(source: UploadSource): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  const reader = source.open().getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks);
    chunks.push(value);
  }
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'push-uploads-sources-'));
  await writeFile(path.join(dir, 'data.bin'), content);
  await writeFile(path.join(dir, 'empty.csv'), '');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('upload sources', () => {
  it('names a bare path by its basename and streams its exact bytes, re-openably', async () => {
    const source = await toUploadSource(path.join(dir, 'data.bin'));
    expect(source).toMatchObject({ name: 'data.bin', size: content.length, reopenable: true });
    expect(sha(await readAll(source))).toBe(sha(content));
    expect(sha(await readAll(source))).toBe(sha(content));
  });

  it('uses the given name for a path', async () => {
    expect(await toUploadSource({ name: 'renamed.bin', path: path.join(dir, 'data.bin') })).toMatchObject({
      name: 'renamed.bin',
    });
  });

  it('reads a 0-byte file as an empty body', async () => {
    const source = await toUploadSource(path.join(dir, 'empty.csv'));
    expect(source.size).toBe(0);
    expect((await readAll(source)).length).toBe(0);
  });

  it.each<[string, () => UploadInput, Uint8Array]>([
    ['a Buffer', () => ({ name: 'b', data: content }), content],
    [
      'a Uint8Array view',
      () => ({ name: 'u', data: new Uint8Array(content.buffer, content.byteOffset + 5, 1000) }),
      content.subarray(5, 1005),
    ],
    ['a string, as UTF-8', () => ({ name: 's', data: 'Grüße, 世界' }), Buffer.from('Grüße, 世界', 'utf8')],
    ['a Blob', () => ({ name: 'blob', data: new Blob([content]) }), content],
  ])('sends %s byte for byte, re-openably', async (_, input, expected) => {
    const source = await toUploadSource(input());
    expect(source).toMatchObject({ size: expected.byteLength, reopenable: true });
    expect(sha(await readAll(source))).toBe(sha(expected));
    expect(sha(await readAll(source))).toBe(sha(expected));
  });

  it.each<[string, () => UploadInput]>([
    [
      'a Node Readable',
      () => ({ name: 'n', stream: createReadStream(path.join(dir, 'data.bin')), size: content.length }),
    ],
    [
      'a web ReadableStream',
      () => ({
        name: 'w',
        stream: Readable.toWeb(Readable.from([content])) as ReadableStream<Uint8Array>,
        size: content.length,
      }),
    ],
    [
      'an async iterable',
      () => ({
        name: 'i',
        stream: (async function* () {
          yield content.subarray(0, 10);
          yield content.subarray(10);
        })(),
        size: content.length,
      }),
    ],
  ])('sends %s once, and refuses to re-open it', async (_, input) => {
    const source = await toUploadSource(input());
    expect(source).toMatchObject({ size: content.length, reopenable: false });
    expect(sha(await readAll(source))).toBe(sha(content));
    expect(() => source.open()).toThrow(/already read/);
  });

  it('fails the stream of a file that changed size since it was listed, before sending a byte', async () => {
    const file = path.join(dir, 'changing.bin');
    await writeFile(file, content);
    const source = await toUploadSource(file);
    await writeFile(file, content.subarray(0, 1000));
    await expect(readAll(source)).rejects.toThrow(/changed size/);
  });

  it('fails the stream of a file rewritten at the same size since it was listed, before its last byte', async () => {
    const file = path.join(dir, 'rewritten.bin');
    await writeFile(file, content);
    const source = await toUploadSource(file);
    // A modification time the listing did not see, at the same size.
    await utimes(file, new Date(), new Date(Date.now() + 5_000));
    await expect(readAll(source)).rejects.toThrow(/was modified/);
  });

  it('refuses a file over 5 GiB before reading it (sparse file)', async () => {
    const big = path.join(dir, 'big.bin');
    await writeFile(big, '');
    await truncate(big, MAX_UPLOAD_BYTES + 1);
    await expect(toUploadSource(big)).rejects.toThrow(/5 GiB/);
  });

  it('accepts a declared size of exactly 5 GiB and refuses one byte more', async () => {
    const stream = () => Readable.from([]);
    await expect(toUploadSource({ name: 'max', stream: stream(), size: MAX_UPLOAD_BYTES })).resolves.toMatchObject({
      size: MAX_UPLOAD_BYTES,
    });
    await expect(toUploadSource({ name: 'over', stream: stream(), size: MAX_UPLOAD_BYTES + 1 })).rejects.toThrow(
      UploadError,
    );
  });

  it.each<[string, unknown, RegExp]>([
    ['a missing file', { path: '/nonexistent/push-api-client/x.csv' }, /Cannot read .*ENOENT/],
    ['a directory', { name: 'd', path: '.' }, /not a regular file/],
    ['a stream without a size', { name: 's', stream: Readable.from([]) }, /declared "size"/],
    ['a negative size', { name: 's', stream: Readable.from([]), size: -1 }, /declared "size"/],
    ['a stream that is not one', { name: 's', stream: 42, size: 1 }, /must be a Node Readable/],
    ['an object with no content', { name: 'x' }, /one of "path", "data" or "stream"/],
    ['data of the wrong type', { name: 'x', data: 42 }, /expected a string, Uint8Array/],
    ['null', null, /expected a path or an object/],
  ])('rejects %s with an UploadError', async (_, input, message) => {
    const promise = toUploadSource(input as UploadInput);
    await expect(promise).rejects.toBeInstanceOf(UploadError);
    await expect(promise).rejects.toThrow(message);
  });
});
