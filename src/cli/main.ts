import { Command, CommanderError } from 'commander';
import { ConfigurationError, PushError } from '../errors.js';
import { VERSION } from '../version.js';
import { demoCommand } from './commands/demo.js';
import { emulatorCommand } from './commands/emulator.js';
import { financeCommand } from './commands/finance-publish.js';
import { tokenCommand } from './commands/token.js';
import { uploadCommand } from './commands/upload.js';
import { ExitCode, UsageError } from './exit-codes.js';

/** The `push-api` program. Commander's own usage errors exit 2, like every other usage error. */
export function buildProgram(): Command {
  const program = new Command('push-api')
    .description('push finance records and batch files to the Push API')
    .version(VERSION)
    .showHelpAfterError('(run with --help for usage)')
    .addCommand(financeCommand())
    .addCommand(uploadCommand())
    .addCommand(tokenCommand())
    .addCommand(emulatorCommand())
    .addCommand(demoCommand());
  const override = (command: Command): void => {
    command.exitOverride();
    for (const sub of command.commands) override(sub);
  };
  override(program);
  return program;
}

function exitCodeOf(error: unknown): number {
  if (error instanceof CommanderError) {
    return error.exitCode === 0 ? ExitCode.Success : ExitCode.Usage;
  }
  if (error instanceof UsageError || error instanceof ConfigurationError) return ExitCode.Usage;
  return ExitCode.Failure;
}

/** One line per error; the stack only with --verbose. Errors of this package never hold a secret. */
function report(error: unknown, verbose: boolean): void {
  if (error instanceof CommanderError) return; // commander has already printed its message
  const message = error instanceof Error ? error.message : String(error);
  const known = error instanceof PushError || error instanceof UsageError;
  const name = error instanceof PushError && !(error instanceof ConfigurationError) ? `${error.name}: ` : '';
  process.stderr.write(`push-api: ${known ? name : 'unexpected error: '}${message}\n`);
  if (verbose && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
}

export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : ExitCode.Success;
  } catch (error) {
    report(error, argv.includes('--verbose'));
    return exitCodeOf(error);
  }
}

const code = await main(process.argv);
// Exit explicitly: idle keep-alive sockets or a stdin left open must not keep a finished run alive.
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
