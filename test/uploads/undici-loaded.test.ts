/**
 * A process that imports the npm undici package (for a proxy agent, say) before its first fetch:
 * on Node 20 and 22 that package's Agent becomes the dispatcher of Node's own fetch, which refuses a
 * Content-Length sent twice. Uploads through the global fetch still go out with one.
 */
import 'undici';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { patternBytes, sha256 } from '../support/files.js';

let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startEmulator();
});
afterAll(() => emulator.close());

describe('uploads with the npm undici package loaded', () => {
  it('upload files and data over real HTTP with one Content-Length each', async () => {
    const data = patternBytes(70_000);
    const client = clientFor(emulator);
    const report = await client.uploads.upload(emulator.mock.appId, [
      { name: 'a.bin', data },
      { name: 'b.txt', data: 'hello' },
    ]);
    expect(report.files.map((file) => [file.name, file.status, file.error?.message])).toEqual([
      ['a.bin', 'uploaded', undefined],
      ['b.txt', 'uploaded', undefined],
    ]);
    expect(emulator.mock.state.file(emulator.mock.appId, 'a.bin')?.sha256).toBe(sha256(data));
  });
});
