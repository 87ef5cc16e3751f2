import { Command } from 'commander';
import { type AccessToken, ConfigurationError, PushError } from '../../index.js';
import { addConnectionOptions, type ConnectionFlags, createClient, resolveConfig } from '../config.js';
import { ExitCode } from '../exit-codes.js';
import { describeStop, jsonError } from '../failure.js';
import type { CommonFlags } from '../options.js';
import { formatTable, Output } from '../output.js';
import { terminalLine } from '../terminal-text.js';

interface TokenFlags extends ConnectionFlags, CommonFlags {
  printToken?: boolean;
}

/** `push-api token`: are my credentials right? Prints what was granted, never the token unless asked. */
export function tokenCommand(): Command {
  const command = new Command('token')
    .description('obtain a token and print its type, expiry and granted scopes')
    .option('--print-token', 'also print the access token itself (it grants access: keep it out of logs)')
    .option('--json', 'print one JSON report on stdout; human text goes to stderr')
    .option('--verbose', 'print one line per HTTP attempt on stderr, and stack traces for errors')
    .option('--quiet', 'print only errors: no progress and no summary');
  return addConnectionOptions(command).action(async (flags: TokenFlags) => {
    const output = new Output({
      json: flags.json === true,
      verbose: flags.verbose === true,
      quiet: flags.quiet === true,
    });
    const config = await resolveConfig(flags);
    const client = await createClient(config, { verbose: flags.verbose });
    let token: AccessToken;
    try {
      token = await client.tokens.getToken();
    } catch (error) {
      // A bad setting stays a usage error (exit 2); what the service answered is told as a
      // publish tells it, naming the address and what to check.
      if (error instanceof ConfigurationError || !(error instanceof PushError)) throw error;
      const cause = describeStop(error, config, 'token');
      output.error(cause, error);
      output.report({ ok: false, exitCode: ExitCode.Stopped, command: 'token', error: jsonError(error, cause) });
      process.exitCode = ExitCode.Stopped;
      return;
    }
    const seconds = Math.round((token.expiresAt.getTime() - Date.now()) / 1000);
    output.result(
      formatTable([
        // The service's words, each kept to one line of the table.
        ['type', terminalLine(token.tokenType)],
        ['expires', `${token.expiresAt.toISOString()} (in ${seconds} s)`],
        ['scopes', terminalLine(token.scopes.join(' '))],
      ]),
    );
    if (flags.printToken && !flags.json) output.value(token.accessToken, { evenIfQuiet: true });
    output.report({
      ok: true,
      exitCode: ExitCode.Success,
      command: 'token',
      tokenType: token.tokenType,
      expiresAt: token.expiresAt.toISOString(),
      expiresInSeconds: seconds,
      scopes: token.scopes,
      ...(flags.printToken ? { accessToken: token.accessToken } : {}),
    });
    process.exitCode = ExitCode.Success;
  });
}
