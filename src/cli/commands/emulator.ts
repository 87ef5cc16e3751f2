/**
 * `push-api emulator`: serves the emulated push service over HTTP until interrupted, for trying
 * the SDK, the CLI or curl against something that behaves like the real service.
 */
import { Command, InvalidArgumentError } from 'commander';
import { CONNECTOR_WRITE, DEMO_APP_ID, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET } from '../../testing/options.js';

/** Seams for tests: where output goes and what stops the server (SIGINT/SIGTERM by default). */
export interface EmulatorCommandIo {
  write?: (text: string) => void;
  stopSignal?: AbortSignal;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new InvalidArgumentError('must be a port number (0-65535)');
  return port;
}

function parseSeconds(value: string): number {
  const seconds = Number(value);
  if (!/^\d+$/.test(value) || seconds < 1) throw new InvalidArgumentError('must be a whole number of seconds (>= 1)');
  return seconds;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Reads `<requests>/<window>`, such as `100/1s`, `10/500ms` or `600/1m`; a bare window is seconds. */
export function parseRateLimit(value: string): { requests: number; windowMs: number } {
  const match = /^(\d+)\/(\d+)(ms|s|m|h)?$/.exec(value.trim());
  if (!match?.[1] || !match[2]) throw new InvalidArgumentError('must look like 100/1s, 10/500ms or 600/1m');
  const windowMs = Number(match[2]) * (UNIT_MS[match[3] ?? 's'] ?? 1000);
  if (windowMs <= 0) throw new InvalidArgumentError('the window must be longer than 0');
  return { requests: Number(match[1]), windowMs };
}

function untilStopped(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal) {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
      return;
    }
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

export function emulatorCommand(io: EmulatorCommandIo = {}): Command {
  const write = io.write ?? ((text: string) => void process.stdout.write(text));
  return new Command('emulator')
    .description('serve an emulated push service on this machine, with demo credentials and a demo app')
    .option('--port <port>', 'port to listen on (0 picks a free one)', parsePort, 4010)
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--token-ttl <seconds>', 'lifetime of issued access tokens', parseSeconds)
    .option('--rate-limit <n/window>', 'data API rate limit, such as 100/1s', parseRateLimit)
    .action(
      async (options: {
        port: number;
        host: string;
        tokenTtl?: number;
        rateLimit?: { requests: number; windowMs: number };
      }) => {
        // Loaded here: the HTTP server (srvx) and the emulated service are only this command's cost.
        const { startEmulator } = await import('../../testing/server.js');
        const running = await startEmulator({
          port: options.port,
          host: options.host,
          tokenTtlSeconds: options.tokenTtl,
          rateLimit: options.rateLimit,
        });
        const { mock } = running;
        write(
          [
            `push-api emulator listening on ${running.url}`,
            `  auth URL:      ${running.authUrl}   (token: POST ${running.authUrl}/oauth2/token)`,
            `  base URL:      ${running.baseUrl}`,
            `  upload URL:    ${running.uploadUrl}`,
            `  client id:     ${DEMO_CLIENT_ID}`,
            `  client secret: ${DEMO_CLIENT_SECRET}   (demo only)`,
            `  scope base:    ${mock.scopeBase}   (data operations need ${mock.scopeBase}/${CONNECTOR_WRITE})`,
            `  app id:        ${DEMO_APP_ID}`,
            'Press Ctrl+C to stop.',
            '',
          ].join('\n'),
        );
        await untilStopped(io.stopSignal);
        await running.close();
        write('emulator stopped\n');
      },
    );
}
