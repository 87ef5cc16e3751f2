/**
 * `push-api emulator`: serves the emulated push service over HTTP until interrupted, for trying
 * the SDK, the CLI or curl against something that behaves like the real service.
 */
import { accessSync, constants, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import type { RunningEmulator } from '../../testing/server.js';
import { UsageError } from '../exit-codes.js';
import { commitTemp, createTempBeside, discardTemp } from '../files.js';
import { resolveOutputPath } from '../output-paths.js';

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

/**
 * `--save` is written on stop: a path that cannot be written, or that is not a regular file (a
 * directory, a FIFO, a device, a link to one), is refused at start, before anything is received.
 * Returns the path with links followed, which is where the file is written.
 */
export function parseSavePath(value: string): string {
  let path: string;
  try {
    path = resolveOutputPath('--save', value).resolved;
  } catch (error) {
    if (error instanceof UsageError) throw new InvalidArgumentError(error.message.replace(/^--save \S+: /, ''));
    throw error;
  }
  try {
    accessSync(dirname(path), constants.W_OK);
  } catch {
    throw new InvalidArgumentError(`cannot write in ${dirname(path)}`);
  }
  return path;
}

/** Quotes a value for a POSIX shell when it holds anything beyond plain URL and name characters. */
export function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

function banner(running: RunningEmulator): string {
  const { mock } = running;
  const settings: [string, string][] = [
    ['PUSH_AUTH_URL', running.authUrl],
    ['PUSH_BASE_URL', running.baseUrl],
    ['PUSH_SCOPE_BASE', mock.scopeBase],
    ['PUSH_CLIENT_ID', mock.clientId],
    ['PUSH_CLIENT_SECRET', mock.clientSecret],
    ['PUSH_APP_ID', mock.appId],
  ];
  return [
    `push-api emulator listening on ${running.url}`,
    `  token:       POST ${running.authUrl}/oauth2/token`,
    `  data API:    ${running.baseUrl}/services/push/v1/customer/apps/{appId}/...`,
    `  uploads:     ${running.uploadUrl}   (where signed upload addresses point)`,
    `  received:    GET ${running.stateUrl}   (JSON; records as JSON Lines: GET ${running.url}/_emulator/records)`,
    '  The client secret below is a published demo value: never use it for anything else.',
    'Settings for PushClient and push-api; paste them into the shell that runs your code:',
    ...settings.map(([name, value]) => `export ${name}=${shellQuote(value)}`),
    'Press Ctrl+C to stop.',
    '',
  ].join('\n');
}

/**
 * Writes the received records as JSON Lines, 0600, to a temporary file created exclusively next to
 * the target, then renamed, so that a crash never leaves half a file under the name asked for.
 */
async function saveRecords(running: RunningEmulator, path: string): Promise<number> {
  const { recordLines } = await import('../../testing/inspection.js');
  const temp = createTempBeside(path, '--save');
  let count = 0;
  try {
    for (const line of recordLines(running.mock)) {
      writeSync(temp.fd, line);
      count++;
    }
    commitTemp(temp, path);
  } catch (error) {
    discardTemp(temp);
    throw error;
  }
  return count;
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
    .option('--save <file>', 'on stop, write the received finance records to FILE as JSON Lines', parseSavePath)
    .action(
      async (options: {
        port: number;
        host: string;
        tokenTtl?: number;
        rateLimit?: { requests: number; windowMs: number };
        save?: string;
      }) => {
        // Loaded here: the HTTP server (srvx) and the emulated service are only this command's cost.
        const { startEmulator } = await import('../../testing/server.js');
        const running = await startEmulator({
          port: options.port,
          host: options.host,
          tokenTtlSeconds: options.tokenTtl,
          rateLimit: options.rateLimit,
        });
        write(banner(running));
        await untilStopped(io.stopSignal);
        await running.close();
        const { receivedSummary } = await import('../../testing/inspection.js');
        write(receivedSummary(running.mock));
        if (options.save !== undefined) {
          const saved = await saveRecords(running, options.save);
          write(`saved ${saved} record${saved === 1 ? '' : 's'} to ${options.save}\n`);
        }
        write('emulator stopped\n');
      },
    );
}
