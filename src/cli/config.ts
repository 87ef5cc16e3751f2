import type { Readable } from 'node:stream';
import { type Command, Option } from 'commander';
import { ENV_VARS } from '../defaults.js';
import { ConfigurationError, PushClient } from '../index.js';
import { UsageError } from './exit-codes.js';
import { readBounded, readSecretFile } from './secret-file.js';
import { writeHumanLine } from './terminal-text.js';
import { proxyDispatcher, verboseHooks } from './transport.js';

/** The connection flags every networked command takes. There is deliberately no secret flag. */
export interface ConnectionFlags {
  clientId?: string;
  authUrl?: string;
  baseUrl?: string;
  scopeBase?: string;
  clientSecretFile?: string;
  clientSecretStdin?: boolean;
  retryAmbiguous?: boolean;
  allowInsecureHttp?: boolean;
}

export interface CliConfig {
  clientId: string;
  clientSecret: string;
  authUrl: string;
  baseUrl: string;
  scopeBase: string;
  /** `--allow-insecure-http`; else the SDK reads PUSH_ALLOW_INSECURE_HTTP. */
  allowInsecureHttp?: true;
}

/**
 * Adds the connection flags. The client secret is never an argument: other users of the machine
 * can read argv with `ps`. It comes from PUSH_CLIENT_SECRET, a file, or stdin.
 */
export function addConnectionOptions(command: Command): Command {
  return command
    .option('--client-id <id>', `client ID of the API credential (env ${ENV_VARS.clientId})`)
    .option('--auth-url <url>', `token service address (env ${ENV_VARS.authUrl})`)
    .option('--base-url <url>', `data API address (env ${ENV_VARS.baseUrl})`)
    .option('--scope-base <prefix>', `common prefix of scope names (env ${ENV_VARS.scopeBase})`)
    .option('--client-secret-file <path>', `read the client secret from this file (else env ${ENV_VARS.clientSecret})`)
    .option('--client-secret-stdin', 'read the client secret from stdin')
    .option(
      '--allow-insecure-http',
      `allow plain http to a non-loopback host, such as an emulator in another container (env ${ENV_VARS.allowInsecureHttp}=1)`,
    );
}

function pick(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  variable: string,
  what: string,
  option: string,
): string {
  const value = flag?.trim() || env[variable]?.trim();
  if (!value) throw new UsageError(`missing ${what}: set ${variable} or pass ${option}`);
  return value;
}

/** Only the first line counts, so a trailing newline from `echo` or an editor is not part of the secret. */
function firstLine(text: string): string {
  return (text.split(/\r?\n/, 1)[0] ?? '').trim();
}

async function readSecret(flags: ConnectionFlags, env: NodeJS.ProcessEnv, stdin: Readable): Promise<string> {
  if (flags.clientSecretFile !== undefined && flags.clientSecretStdin) {
    throw new UsageError('use either --client-secret-file or --client-secret-stdin, not both');
  }
  let secret: string | undefined;
  if (flags.clientSecretFile !== undefined) {
    secret = firstLine(await readSecretFile(flags.clientSecretFile));
    if (secret === '') throw new UsageError('the file given to --client-secret-file is empty');
  } else if (flags.clientSecretStdin) {
    secret = firstLine(await readBounded(stdin, '--client-secret-stdin'));
    if (secret === '') throw new UsageError('--client-secret-stdin: nothing was read from stdin');
  }
  return (
    secret ??
    pick(undefined, env, ENV_VARS.clientSecret, 'client secret', '--client-secret-file <path> or --client-secret-stdin')
  );
}

/**
 * The app the command works on: `--app`, else `PUSH_APP_ID` (the emulator's banner exports it).
 * Not mandatory to commander, whose message would not name the variable: see {@link requireApp}.
 */
export function appOption(command: Command, description: string): Command {
  return command.addOption(new Option('--app <appId>', description).env('PUSH_APP_ID'));
}

/** The app id, or a usage error naming both the flag and the variable. */
export function requireApp(app: string | undefined): string {
  if (app === undefined || app === '') {
    throw new UsageError('no application given: pass --app APP_ID or set PUSH_APP_ID');
  }
  return app;
}

/** Flags beat environment variables. Each missing setting is a one-line error naming both. */
export async function resolveConfig(
  flags: ConnectionFlags,
  env: NodeJS.ProcessEnv = process.env,
  stdin: Readable = process.stdin,
): Promise<CliConfig> {
  const clientId = pick(flags.clientId, env, ENV_VARS.clientId, 'client ID', '--client-id');
  const authUrl = pick(flags.authUrl, env, ENV_VARS.authUrl, 'token service address', '--auth-url');
  const baseUrl = pick(flags.baseUrl, env, ENV_VARS.baseUrl, 'data API address', '--base-url');
  const scopeBase = pick(flags.scopeBase, env, ENV_VARS.scopeBase, 'scope base', '--scope-base');
  const clientSecret = await readSecret(flags, env, stdin);
  return {
    clientId,
    clientSecret,
    authUrl,
    baseUrl,
    scopeBase,
    ...(flags.allowInsecureHttp === true && { allowInsecureHttp: true }),
  };
}

const SDK_ENV = [ENV_VARS.logLevel, ENV_VARS.allowInsecureHttp];

function passedEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(SDK_ENV.flatMap((name) => (env[name] === undefined ? [] : [[name, env[name]]])));
}

export interface ClientFlags {
  retryAmbiguous?: boolean;
  /** `--verbose`: one stderr line per HTTP attempt. */
  verbose?: boolean;
}

/**
 * Builds the SDK client; its configuration errors (a bad URL, plain http to a remote host) are
 * usage errors. Proxy variables are honoured here, for the CLI only: the SDK leaves transport to
 * its caller.
 */
export async function createClient(
  config: CliConfig,
  options: ClientFlags = {},
  env: NodeJS.ProcessEnv = process.env,
): Promise<PushClient> {
  const dispatcher = await proxyDispatcher(env);
  try {
    return new PushClient({
      ...config,
      retryAmbiguous: options.retryAmbiguous ?? false,
      ...(dispatcher !== undefined && { dispatcher }),
      ...(options.verbose === true && { hooks: verboseHooks((line) => writeHumanLine(process.stderr, line)) }),
      // Everything was resolved above; the SDK must not read the environment a second time,
      // except PUSH_LOG and PUSH_ALLOW_INSECURE_HTTP, which it reads as for any client.
      env: passedEnv(env),
    });
  } catch (error) {
    if (error instanceof ConfigurationError) throw new UsageError(error.message.replace(/^PushClient: /, ''));
    throw error;
  }
}
