/**
 * Uploads as Bun's and Deno's own fetch send them (the runtimes come from the npm registry through
 * npx, as in the runtime matrix), run from the sources by test/support/runtime-probe.mjs against
 * services on 127.0.0.1: empty files, which Deno sends chunked unless the body is bytes, and a
 * storage host that cannot be reached, whose error Bun and Deno word with the whole signed address;
 * a data API that refuses the connection, which Deno reports without a code;
 * and `startEmulator` in the runtime, after which the process ends by itself.
 */
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startEmulator } from 'push-api-client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOSTILE_APP_ID, useHostileService } from '../support/hostile-service.js';

const run = promisify(execFile);
const probe = fileURLToPath(new URL('../support/runtime-probe.mjs', import.meta.url));
const SIGNATURE = 'X-Amz-Signature=5ec7e75167a7ef00d';

const RUNTIMES = {
  Bun: ['-y', 'bun@1', probe],
  Deno: ['-y', 'deno@2', 'run', '-A', '--sloppy-imports', probe],
} as const;

/** A port on 127.0.0.1 that nothing listens on: a storage host that refuses every connection. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const start = useHostileService();
let emulator: Awaited<ReturnType<typeof startEmulator>>;
beforeAll(async () => {
  emulator = await startEmulator({ apps: [HOSTILE_APP_ID] });
});
afterAll(() => emulator.close());

describe.each(Object.keys(RUNTIMES) as (keyof typeof RUNTIMES)[])('uploads on %s', (runtime) => {
  it('stores empty files, hides signed address queries, fails a refused batch, and ends by itself', async () => {
    const port = await closedPort();
    const refusing = await start(({ route }, res) => {
      if (route !== 'upload-urls') return false;
      const address = `http://127.0.0.1:${port}/files/a.csv?${SIGNATURE}`;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ 'a.csv': address }));
      return true;
    });
    const argument = JSON.stringify({
      emulator: emulator.clientOptions(),
      refusing: refusing.clientOptions(),
      closedUrl: `http://127.0.0.1:${port}`,
      appId: HOSTILE_APP_ID,
    });
    const { stdout } = await run('npx', [...RUNTIMES[runtime], argument], {
      timeout: 90_000,
      env: { ...process.env, NO_COLOR: '1' },
    });
    const seen = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as {
      empty: string[];
      refused: string[];
      shown: string;
      own: { sent: number; stored: string[] };
      unreachable: Record<string, unknown>;
    };
    // A refused connection sent nothing: the batch is failed and the run stops, as on Node.
    expect(seen.unreachable).toEqual({
      stopped: 'PublishStoppedError',
      cause: 'finance request failed: ECONNREFUSED',
      failed: 1,
      unknown: 0,
    });
    // The emulator started in the runtime; the process ended by itself once it was closed.
    expect(seen.own).toEqual({ sent: 1, stored: ['é 😀.csv: 1', 'empty-path.csv: 0'] });
    // Storage hosts refuse a chunked PUT; the emulator answers one 501, as they do.
    expect(seen.empty).toEqual([
      'empty-string.csv: uploaded',
      'empty-bytes.bin: uploaded',
      'empty-blob.bin: uploaded',
      'empty-stream.bin: uploaded',
      'empty-path.csv: uploaded',
    ]);
    for (const name of [
      'empty-string.csv',
      'empty-bytes.bin',
      'empty-blob.bin',
      'empty-stream.bin',
      'empty-path.csv',
    ]) {
      expect(emulator.mock.state.file(HOSTILE_APP_ID, name)?.size).toBe(0);
    }
    expect(seen.refused).toEqual(['failed']);
    expect(seen.shown).not.toContain('5ec7e75167a7ef00d');
    expect(refusing.on('upload-urls')).toHaveLength(1);
  }, 120_000);
});
