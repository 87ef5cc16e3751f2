/**
 * `push-api emulator` on a port another process holds (a second emulator left running, another
 * dev server): a usage error naming the port and the way out, exit 2, not an "unexpected error".
 */
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { emulatorCommand } from '../../src/cli/commands/emulator.js';
import { UsageError } from '../../src/cli/exit-codes.js';

let holder: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (holder ? holder.close(() => resolve()) : resolve())));

describe('push-api emulator on a port in use', () => {
  it('refuses with a usage error that names the port and suggests --port 0', async () => {
    const server = createServer();
    holder = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const output: string[] = [];
    const stop = new AbortController();
    const run = emulatorCommand({ write: (text) => output.push(text), stopSignal: stop.signal }).parseAsync(
      ['--port', String(port)],
      { from: 'user' },
    );
    const error = await run.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    stop.abort();
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe(
      `--port ${port}: 127.0.0.1:${port} is in use by another process; choose another port, or --port 0 for a free one`,
    );
    expect(output.join('')).toBe('');
  });
});
