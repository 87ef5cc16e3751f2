/**
 * `push-api emulator`: serves the emulated push service over HTTP until interrupted, for trying
 * the SDK, the CLI or curl against something that behaves like the real service.
 */
import { accessSync, constants, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import type { FaultRule } from '../../testing/faults.js';
import type { RunningEmulator, StartEmulatorOptions } from '../../testing/server.js';
import { UsageError } from '../exit-codes.js';
import { commitTemp, createTempBeside, discardTemp, holdName } from '../files.js';
import { resolveOutputPath } from '../output-paths.js';
import { readSecretFile } from '../secret-file.js';
import { claimStopSignal } from '../signals.js';
import { writeHumanRaw } from '../terminal-text.js';
import {
  collect,
  FAULT_SYNTAX,
  parseAllowedHost,
  parseAppId,
  parseClientId,
  parseFault,
  parsePublicUrl,
} from './emulator-flags.js';
import { listenError } from './emulator-listen.js';

/**
 * Seams for tests: where output goes (`write`: stdout; `writeInfo`: what must stay off stdout under
 * `--json`, stderr by default) and what stops the server (SIGINT/SIGTERM by default).
 */
export interface EmulatorCommandIo {
  write?: (text: string) => void;
  writeInfo?: (text: string) => void;
  stopSignal?: AbortSignal;
}

interface EmulatorFlags {
  port: number;
  host: string;
  tokenTtl?: number;
  rateLimit?: { requests: number; windowMs: number };
  save?: string;
  fault?: FaultRule[];
  app?: string[];
  clientId?: string;
  clientSecretFile?: string;
  json?: boolean;
  publicUrl?: string;
  allowedHost?: string[];
  lenientScope?: boolean;
}

/** What `--json` prints: everything a script needs to configure a client, on one line. */
export interface EmulatorSettings {
  authUrl: string;
  baseUrl: string;
  scopeBase: string;
  clientId: string;
  /** null when it came from `--client-secret-file`: a secret given in a file is never printed. */
  clientSecret: string | null;
  appIds: string[];
  inspectorUrl: string;
}

/**
 * The Fetch standard's "bad ports": fetch (Node's, the SDK's, every browser's) refuses to connect
 * to them, so an emulator listening there could be reached by curl and by no client.
 */
const FETCH_BAD_PORTS = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110,
  111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532,
  540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061,
  6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new InvalidArgumentError('must be a port number (0-65535)');
  if (FETCH_BAD_PORTS.has(port)) {
    throw new InvalidArgumentError(
      `${port} is a port fetch never connects to (the Fetch standard's bad ports): choose another`,
    );
  }
  return port;
}

function parseSeconds(value: string): number {
  const seconds = Number(value);
  if (!/^\d+$/.test(value) || seconds < 1) throw new InvalidArgumentError('must be a whole number of seconds (>= 1)');
  return seconds;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * Reads `<requests>/<window>`, such as `100/s`, `100/1s`, `10/500ms` or `600/1m`; a bare number
 * is seconds, a bare unit is one of it.
 */
export function parseRateLimit(value: string): { requests: number; windowMs: number } {
  const match = /^(\d{1,9})\/(\d{1,9})?(ms|s|m|h)?$/.exec(value.trim());
  if (!match?.[1] || (match[2] === undefined && match[3] === undefined)) {
    throw new InvalidArgumentError('must look like 100/s, 10/500ms or 600/1m');
  }
  const windowMs = Number(match[2] ?? 1) * (UNIT_MS[match[3] ?? 's'] ?? 1000);
  if (windowMs <= 0) throw new InvalidArgumentError('the window must be longer than 0');
  if (Number(match[1]) < 1) throw new InvalidArgumentError('must allow at least 1 request per window');
  return { requests: Number(match[1]), windowMs };
}

/**
 * `--save` is written on stop: a path that cannot be written, or that is not a regular file (a
 * directory, a FIFO, a device, a link to one), is refused at start, before anything is received.
 * Returns the path with links followed, which is where the file is written.
 */
function parseSavePath(value: string): string {
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

/** Plain http to a name that is not loopback: the SDK and CLI then need their explicit switch. */
function needsInsecureSwitch(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  return protocol === 'http:' && !['127.0.0.1', 'localhost', '[::1]'].includes(hostname);
}

function settingsOf(running: RunningEmulator, secretFromFile: boolean): EmulatorSettings {
  const { mock } = running;
  return {
    authUrl: running.authUrl,
    baseUrl: running.baseUrl,
    scopeBase: mock.scopeBase,
    clientId: mock.clientId,
    clientSecret: secretFromFile ? null : mock.clientSecret,
    appIds: mock.state.apps,
    inspectorUrl: `${running.url}/_emulator/`,
  };
}

function banner(running: RunningEmulator, settings: EmulatorSettings, secretFile: string | undefined): string {
  const secretLine =
    secretFile === undefined
      ? `export PUSH_CLIENT_SECRET=${shellQuote(settings.clientSecret ?? '')}`
      : `export PUSH_CLIENT_SECRET="$(head -n 1 ${shellQuote(resolve(secretFile))})"`;
  const reachable = running.url === running.listenUrl ? '' : ` (reachable as ${running.url})`;
  return [
    `push-api emulator listening on ${running.listenUrl}${reachable}`,
    `  token:       POST ${running.authUrl}/oauth2/token`,
    `  data API:    ${running.baseUrl}/services/push/v1/customer/apps/{appId}/...`,
    `  uploads:     ${running.uploadUrl}   (where signed upload addresses point)`,
    `  received:    GET ${running.stateUrl}   (JSON; records as JSON Lines: GET ${running.url}/_emulator/records)`,
    `  control:     POST ${running.url}/_emulator/faults, /_emulator/reset, /_emulator/clock   (JSON bodies)`,
    `  inspector:   ${settings.inspectorUrl}`,
    `  apps:        ${settings.appIds.join(', ')}`,
    ...(secretFile === undefined
      ? ['  The client secret below is a published demo value: never use it for anything else.']
      : []),
    'Settings for PushClient and push-api; paste them into the shell that runs your code:',
    `export PUSH_AUTH_URL=${shellQuote(settings.authUrl)}`,
    `export PUSH_BASE_URL=${shellQuote(settings.baseUrl)}`,
    `export PUSH_SCOPE_BASE=${shellQuote(settings.scopeBase)}`,
    `export PUSH_CLIENT_ID=${shellQuote(settings.clientId)}`,
    secretLine,
    `export PUSH_APP_ID=${shellQuote(settings.appIds[0] ?? '')}`,
    ...(needsInsecureSwitch(running.url)
      ? [
          '# plain http to a host that is not loopback: the SDK and CLI refuse it without this switch',
          'export PUSH_ALLOW_INSECURE_HTTP=1',
        ]
      : []),
    'Press Ctrl+C to stop.',
    '',
  ].join('\n');
}

/**
 * The first line of the secret file. Read as the other commands read theirs: opened without
 * waiting, a pipe read by the event loop (a FIFO nobody writes to would otherwise hold a libuv
 * thread, and with it the process's exit after Ctrl-C), a device refused, a bounded read; errors
 * never show the path (a secret pasted there would be printed).
 */
async function readSecretLine(path: string): Promise<string> {
  const text = await readSecretFile(path);
  const secret = (text.split(/\r?\n/, 1)[0] ?? '').trim();
  if (!/^[\x21-\x7e]{1,1024}$/.test(secret)) {
    throw new UsageError(
      'the file given to --client-secret-file must start with a line of 1-1024 printable characters',
    );
  }
  return secret;
}

/** The emulator's options from the flags: apps, credential, limits, addresses. */
async function startOptions(flags: EmulatorFlags): Promise<StartEmulatorOptions> {
  const { SCOPE_NAMES, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, DEMO_SCOPE_BASE } = await import('../../testing/options.js');
  const customCredential = flags.clientId !== undefined || flags.clientSecretFile !== undefined;
  return {
    port: flags.port,
    host: flags.host,
    tokenTtlSeconds: flags.tokenTtl,
    rateLimit: flags.rateLimit,
    ...(flags.app && { apps: [...new Set(flags.app)] }),
    ...(customCredential && {
      credentials: [
        {
          clientId: flags.clientId ?? DEMO_CLIENT_ID,
          clientSecret:
            flags.clientSecretFile === undefined ? DEMO_CLIENT_SECRET : await readSecretLine(flags.clientSecretFile),
          scopes: SCOPE_NAMES.map((name) => `${DEMO_SCOPE_BASE}/${name}`),
        },
      ],
    }),
    ...(flags.publicUrl !== undefined && { publicUrl: flags.publicUrl }),
    ...(flags.allowedHost && { allowedHosts: flags.allowedHost }),
    ...(flags.lenientScope === true && { lenientScope: true }),
  };
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
  // SIGINT and SIGTERM are claimed, so that the CLI lets the server stop and print what it received.
  const stop = signal ?? claimStopSignal();
  return new Promise((resolve) => {
    if (stop.aborted) resolve();
    else stop.addEventListener('abort', () => resolve(), { once: true });
  });
}

export function emulatorCommand(io: EmulatorCommandIo = {}): Command {
  const write = io.write ?? ((text: string) => writeHumanRaw(process.stdout, text));
  const writeInfo = io.writeInfo ?? ((text: string) => writeHumanRaw(process.stderr, text));
  return new Command('emulator')
    .description('serve an emulated push service on this machine, with demo credentials and a demo app')
    .option('--port <port>', 'port to listen on (0 picks a free one)', parsePort, 4010)
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--public-url <url>', 'address other containers reach it by, such as http://emulator:4010', parsePublicUrl)
    .option('--allowed-host <name>', 'also accept this name in Host headers (repeatable)', collect(parseAllowedHost))
    .option('--app <id>', 'an application that exists (repeatable; replaces demo-app)', collect(parseAppId))
    .option('--client-id <id>', 'client id of the credential (default demo-client)', parseClientId)
    .option(
      '--client-secret-file <path>',
      "read the credential's secret from the first line of this file (never printed)",
    )
    .option('--token-ttl <seconds>', 'lifetime of issued access tokens', parseSeconds)
    .option('--rate-limit <n/window>', 'data API rate limit, such as 100/s', parseRateLimit)
    .option('--fault <spec>', `inject a fault (repeatable): ${FAULT_SYNTAX}`, collect(parseFault))
    .option('--lenient-scope', 'grant every scope to a token request without scope, instead of invalid_scope')
    .option('--json', 'print the settings as one JSON object on stdout, then keep serving')
    .option('--save <file>', 'on stop, write the received finance records to FILE as JSON Lines', parseSavePath)
    .action(async (options: EmulatorFlags) => {
      // Held from the start: another user taking the name while the emulator runs would make the
      // rename on stop fail in a sticky directory, and the received records would be lost.
      if (options.save !== undefined) holdName(options.save, '--save');
      // Loaded here: the HTTP server (srvx) and the emulated service are only this command's cost.
      const { startEmulator } = await import('../../testing/server.js');
      const running = await startEmulator(await startOptions(options)).catch((error: unknown) => {
        throw listenError(error, options.host, options.port);
      });
      for (const rule of options.fault ?? []) running.mock.faults.add(rule);
      const settings = settingsOf(running, options.clientSecretFile !== undefined);
      // Under --json, stdout carries that one object; everything else goes to stderr.
      const info = options.json === true ? writeInfo : write;
      if (options.json === true) write(`${JSON.stringify(settings)}\n`);
      else write(banner(running, settings, options.clientSecretFile));
      await untilStopped(io.stopSignal);
      await running.close();
      const { receivedSummary } = await import('../../testing/inspection.js');
      info(receivedSummary(running.mock));
      if (options.save !== undefined) {
        const saved = await saveRecords(running, options.save);
        info(`saved ${saved} record${saved === 1 ? '' : 's'} to ${options.save}\n`);
      }
      info('emulator stopped\n');
    });
}
