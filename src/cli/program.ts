import { Command, CommanderError } from 'commander';
import { ConfigurationError, PushError, VERSION } from '../index.js';
import { demoCommand } from './commands/demo.js';
import { emulatorCommand } from './commands/emulator.js';
import { tokenCommand } from './commands/token.js';
import { ExitCode, UsageError } from './exit-codes.js';
import { jsonError } from './failure.js';
import { installInterrupts } from './interrupts.js';
import { redactOptionValues } from './options.js';
import { claimJsonReport, wasJsonReportWritten } from './output.js';
import { financeCommand } from './publish/command.js';
import { writeHumanLine, writeHumanRaw, writeJsonLine, writeStack } from './terminal-text.js';
import { uploadCommand } from './upload/command.js';

/**
 * The `push-api` program. Commander's own usage errors exit 2, like every other usage error, and
 * never echo an option's value (see {@link redactOptionValues}).
 */
function buildProgram(argv: readonly string[] = process.argv): Command {
  const program = new Command('push-api')
    .description('push finance records and batch files to the Push API')
    .version(VERSION)
    .showHelpAfterError('(run with --help for usage)')
    .addCommand(financeCommand())
    .addCommand(uploadCommand())
    .addCommand(tokenCommand())
    .addCommand(emulatorCommand())
    .addCommand(demoCommand())
    .addCommand(financeSubcommandAlone('publish'), { hidden: true })
    .addCommand(financeSubcommandAlone('template'), { hidden: true });
  const override = (command: Command): void => {
    command.exitOverride();
    // Commander quotes what was typed (an unknown option, an argument) and may be handed text from a
    // glob or a script: its help and errors reach the terminal escaped, like every other line.
    command.configureOutput({
      writeOut: (text) => writeHumanRaw(process.stdout, text),
      writeErr: (text) => writeHumanRaw(process.stderr, text),
      outputError: (text, write) => write(redactOptionValues(text, argv)),
    });
    for (const sub of command.commands) override(sub);
  };
  override(program);
  return program;
}

/**
 * `publish` and `template` typed without `finance` (the README's `push-api finance publish` cut
 * short): a pointer to the command meant, exit 2, sending nothing. What followed is not echoed.
 */
function financeSubcommandAlone(name: string): Command {
  return new Command(name)
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .action(() => {
      throw new UsageError(`unknown command '${name}': did you mean push-api finance ${name}?`);
    });
}

function exitCodeOf(error: unknown): number {
  if (error instanceof CommanderError) {
    return error.exitCode === 0 ? ExitCode.Success : ExitCode.Usage;
  }
  if (error instanceof UsageError || error instanceof ConfigurationError) return ExitCode.Usage;
  return ExitCode.Stopped;
}

/** One line per error; the stack only with --verbose. Errors of this package never hold a secret. */
function report(error: unknown, verbose: boolean): void {
  if (error instanceof CommanderError) return; // commander has already printed its message
  const message = error instanceof Error ? error.message : String(error);
  const known = error instanceof PushError || error instanceof UsageError;
  const name = error instanceof PushError && !(error instanceof ConfigurationError) ? `${error.name}: ` : '';
  writeHumanLine(process.stderr, `push-api: ${known ? name : 'unexpected error: '}${message}`);
  if (verbose && error instanceof Error && error.stack) writeStack(process.stderr, error);
}

/**
 * Under `--json`, stdout carries exactly one JSON object whatever happens: a command that fails
 * before printing its report (a usage, configuration or token error) prints this one instead.
 */
function reportJsonError(error: unknown, exitCode: number, argv: readonly string[]): void {
  if (!claimJsonReport()) return;
  const commander = error instanceof CommanderError;
  const name = commander ? 'UsageError' : error instanceof Error ? error.name : 'Error';
  const raw = error instanceof Error ? error.message : String(error);
  const message = commander
    ? redactOptionValues(raw, argv)
        .replace(/^error: /, '')
        .split('\n')[0]
    : raw;
  const error_ = commander ? { name, message } : jsonError(error, message);
  writeJsonLine(process.stdout, { ok: false, exitCode, error: { ...error_, name } });
}

async function parseAndRun(argv: string[]): Promise<number> {
  try {
    await buildProgram(argv).parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : ExitCode.Success;
  } catch (error) {
    // The run is ending on an early signal (see `run`), which cut this command short: nothing to add.
    const interrupts = installInterrupts();
    if (interrupts.stop.aborted && !interrupts.claimed) return ExitCode.Interrupted;
    report(error, argv.includes('--verbose'));
    const exitCode = exitCodeOf(error);
    const helpOrVersion = error instanceof CommanderError && error.exitCode === 0;
    if (argv.includes('--json') && !helpOrVersion) reportJsonError(error, exitCode, argv);
    return exitCode;
  }
}

/**
 * A signal before any command claimed the signals (parsing, reading settings and inputs, the
 * fingerprint, opening the checkpoint, or a command that never claims them): the run ends now,
 * with exit 130 and, under `--json`, its one object. Whatever the command was still doing is cut
 * short by the exit; a report it had already printed stays the only one.
 */
function reportEarlyInterrupt(signal: NodeJS.Signals, argv: readonly string[]): number {
  // For `finance publish` and `upload`, which claim the signals before they send, this means
  // nothing was sent; `token` and `demo` never claim them, and simply stop.
  const message = `interrupted by ${signal}`;
  writeHumanLine(process.stderr, `push-api: ${message}`);
  if (argv.includes('--json') && claimJsonReport()) {
    const error = { name: 'InterruptedError', message };
    writeJsonLine(process.stdout, { ok: false, exitCode: ExitCode.Interrupted, interrupted: true, error });
  }
  return ExitCode.Interrupted;
}

/**
 * Runs `push-api` with `argv` and resolves with its exit code. The caller (main.ts) installed the
 * signal handlers before loading this module.
 */
export async function run(argv: string[]): Promise<number> {
  const interrupts = installInterrupts();
  // A report already printed means the command is only finishing: the signal changes nothing.
  const early = interrupts.unclaimed.then((signal) =>
    wasJsonReportWritten() ? new Promise<number>(() => {}) : reportEarlyInterrupt(signal, argv),
  );
  if (interrupts.stop.aborted && !interrupts.claimed) return early;
  return Promise.race([parseAndRun(argv), early]);
}
