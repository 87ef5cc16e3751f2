import { Command, InvalidArgumentError } from 'commander';
import { Checkpoint, fingerprintInputs } from '../checkpoint.js';
import { acquireCheckpointLock, lockPathFor } from '../checkpoint-lock.js';
import { addConnectionOptions, appOption, type ConnectionFlags, createClient, resolveConfig } from '../config.js';
import { ExitCode, exitCodeFor, UsageError } from '../exit-codes.js';
import { describeStop, jsonError } from '../failure.js';
import { installInterrupts } from '../interrupts.js';
import { type CommonFlags, integerOption } from '../options.js';
import { formatDuration, formatTable, Output } from '../output.js';
import { checkOutputPaths, resolveOutputPath } from '../output-paths.js';
import { createProgress, rate } from '../progress.js';
import { parseColumnMap } from '../readers/convert.js';
import { checkCsvHeaders, type InputSpec, parseFormat, resolveInputs } from '../readers/index.js';
import { InputError } from '../readers/types.js';
import { RejectsWriter } from '../rejects.js';
import { onInterrupt } from '../signals.js';
import { type PublishRunResult, runPublish } from './run.js';

/** Requests in flight unless `--concurrency` says otherwise (the SDK's default). */
const DEFAULT_CONCURRENCY = 4;

interface PublishFlags extends ConnectionFlags, CommonFlags {
  app?: string;
  format?: string;
  map?: string;
  delimiter?: string;
  batchSize: number;
  maxBatchBytes?: number;
  concurrency?: number;
  dryRun?: boolean;
  rejects?: string;
  checkpoint?: string;
  resendUnknown?: boolean;
}

function delimiterOption(value: string): string {
  const named: Record<string, string> = { comma: ',', semicolon: ';', tab: '\t', '\\t': '\t' };
  const delimiter = named[value] ?? value;
  if (delimiter.length !== 1 || delimiter === '"' || delimiter === '\n' || delimiter === '\r') {
    throw new InvalidArgumentError('--delimiter must be one character, such as ";", or comma, semicolon or tab');
  }
  return delimiter;
}

export function financeCommand(): Command {
  const finance = new Command('finance').description('finance records');
  const publish = new Command('publish')
    .description('publish finance records from CSV, JSON Lines or JSON files (- for stdin)')
    .argument('<files...>', 'input files; - reads stdin (needs --format)');
  appOption(publish, 'application the records belong to')
    .option('--format <format>', 'csv, jsonl or json (default: by file extension)')
    .option('--map <pairs>', 'rename CSV columns or JSON keys, field=Column pairs: vendor=Supplier,amount=Total')
    .option(
      '--delimiter <char>',
      'CSV cell separator: , ; tab or any one character (default: from the header)',
      delimiterOption,
    )
    .option('--batch-size <n>', 'records per request (at most 1000)', integerOption('--batch-size', 1, 1000), 1000)
    .option(
      '--max-batch-bytes <n>',
      'most bytes per request body (default 5 MiB)',
      integerOption('--max-batch-bytes', 1024),
    )
    .option(
      '--concurrency <n>',
      `requests in flight (default ${DEFAULT_CONCURRENCY})`,
      integerOption('--concurrency', 1, 64),
    )
    .option('--retry-ambiguous', 're-send batches whose outcome is unknown (may duplicate records)')
    .option('--dry-run', 'read and validate everything, send nothing')
    .option('--rejects <file>', 'write invalid rows and failed or unknown records to this JSONL file')
    .option('--checkpoint <file>', 'record delivered records here; a re-run with the same input resumes')
    .option('--resend-unknown', 'with --checkpoint: send again records whose outcome was unknown (may duplicate)')
    .option('--json', 'print one JSON report on stdout; human text goes to stderr')
    .option('--verbose', 'print one line per HTTP attempt on stderr, and stack traces for errors')
    .option('--quiet', 'print only errors: no progress and no summary');
  addConnectionOptions(publish).action(async (files: string[], flags: PublishFlags) => {
    process.exitCode = await publishAction(files, flags);
  });
  return finance.addCommand(publish);
}

async function publishAction(files: string[], flags: PublishFlags): Promise<number> {
  const output = new Output({
    json: flags.json === true,
    verbose: flags.verbose === true,
    quiet: flags.quiet === true,
  });
  const format = flags.format === undefined ? undefined : parseFormat(flags.format);
  const columnMap = parseColumnMap(flags.map);
  const inputs = await resolveInputs(files, format);
  if (flags.clientSecretStdin && inputs.some((input) => input.path === '-')) {
    throw new UsageError('--client-secret-stdin cannot be combined with reading records from stdin (-)');
  }
  if (flags.resendUnknown && flags.checkpoint === undefined)
    throw new UsageError('--resend-unknown needs --checkpoint');
  // A dry run delivers nothing, so it has nothing to checkpoint; accepting the flag would suggest otherwise.
  if (flags.dryRun && flags.checkpoint !== undefined)
    throw new UsageError('--checkpoint cannot be used with --dry-run');
  const paths = outputPaths(inputs, flags);
  await checkCsvHeaders(inputs, columnMap, flags.delimiter);
  // Taken before the token request and before the input is fingerprinted: a second run stops at once.
  const lock = paths.checkpoint === undefined ? undefined : acquireCheckpointLock(paths.checkpoint);
  try {
    return await publishLocked(inputs, flags, output, columnMap, paths);
  } finally {
    lock?.release();
  }
}

/**
 * The files a run writes, resolved and checked before anything is sent: never an input, never each
 * other (nor the checkpoint's lock), never a FIFO, device or directory.
 */
function outputPaths(inputs: InputSpec[], flags: PublishFlags): { rejects?: string; checkpoint?: string } {
  const checkpoint = flags.checkpoint && resolveOutputPath('--checkpoint', flags.checkpoint).resolved;
  const checked = checkOutputPaths(
    inputs.map((input) => input.path),
    [
      { option: '--checkpoint', path: flags.checkpoint },
      { option: '--checkpoint lock', path: checkpoint && lockPathFor(checkpoint) },
      { option: '--rejects', path: flags.rejects },
    ],
  );
  const find = (option: string) => checked.find((output) => output.option === option)?.resolved;
  return { rejects: find('--rejects'), checkpoint: find('--checkpoint') };
}

async function publishLocked(
  inputs: InputSpec[],
  flags: PublishFlags,
  output: Output,
  columnMap: Map<string, string>,
  paths: { rejects?: string; checkpoint?: string },
): Promise<number> {
  const appId = flags.app as string;
  const config = flags.dryRun ? undefined : await resolveConfig(flags);
  const client =
    config && (await createClient(config, { retryAmbiguous: flags.retryAmbiguous === true, verbose: flags.verbose }));
  let checkpoint: Checkpoint | undefined;
  if (flags.checkpoint !== undefined && config !== undefined) {
    const readingOptions = { map: [...columnMap], delimiter: flags.delimiter };
    const fingerprint = await fingerprintInputs(inputs, readingOptions, installInterrupts().stop);
    checkpoint = Checkpoint.open(paths.checkpoint as string, fingerprint, inputs, flags.resendUnknown === true, {
      appId,
      baseUrl: config.baseUrl,
    });
  }
  // Claimed before the first file is written: from here on a signal stops the run in order, and
  // the rejects file and the checkpoint say what happened. Until here it ends the run at once.
  const signals = onInterrupt(
    output,
    'stopping: reading no more input; in-flight batches finish (Ctrl-C or SIGTERM again to abort them)',
  );
  const rejects = new RejectsWriter(paths.rejects);
  const totalBytes = inputs.every((input) => input.size !== undefined)
    ? inputs.reduce((sum, input) => sum + (input.size ?? 0), 0)
    : undefined;
  const started = Date.now();
  const progress = await createProgress(output, flags.dryRun ? 'validate' : 'publish', totalBytes);
  let result: PublishRunResult;
  try {
    result = await runPublish({
      appId,
      inputs,
      columnMap,
      batchSize: flags.batchSize,
      maxBatchBytes: flags.maxBatchBytes,
      concurrency: flags.concurrency,
      client,
      rejects,
      checkpoint,
      stopReading: signals.stop,
      abort: signals.abort,
      onProgress: (counts, bytesRead) => {
        const done = flags.dryRun ? counts.recordsValid : counts.recordsSent;
        const detail = `${done} ${flags.dryRun ? 'valid' : 'sent'}, ${counts.recordsInvalid} invalid, ${counts.recordsFailed} failed, ${counts.recordsUnknown} unknown | ${rate(done, started)}`;
        progress.update(bytesRead, detail);
      },
    });
  } finally {
    progress.stop();
    signals.dispose();
    // Settled batches are saved in the background: on the disk before the lock is released.
    checkpoint?.flush();
    await rejects.close();
  }
  // A signal before the report makes the run interrupted, even one that came after the last batch:
  // the exit code is 130 whatever moment the signal chose.
  if (signals.stop.aborted) result.interrupted = true;
  const endpoints = { authUrl: config?.authUrl, baseUrl: config?.baseUrl, appId };
  return summarize(output, flags, result, rejects, checkpoint?.carried().delivered ?? 0, endpoints);
}

function summarize(
  output: Output,
  flags: PublishFlags,
  result: PublishRunResult,
  rejects: RejectsWriter,
  carriedDelivered: number,
  endpoints: { authUrl?: string; baseUrl?: string; appId: string },
): number {
  const { counts, stoppedBy } = result;
  const nothingSent = counts.recordsSent === 0 && counts.batchesFailed === 0 && counts.batchesUnknown === 0;
  let exitCode: number = exitCodeFor(counts, { stopped: stoppedBy !== undefined, interrupted: result.interrupted });
  // A broken input met before anything was sent is an input error, like a missing file.
  if (stoppedBy instanceof InputError && nothingSent && !result.interrupted) exitCode = ExitCode.Usage;
  const cause = stoppedBy === undefined ? undefined : describeStop(stoppedBy, endpoints);
  if (stoppedBy !== undefined) output.error(cause as string, stoppedBy);
  if (flags.rejects === undefined && rejects.firstInvalid.length > 0) showInvalid(output, rejects);
  const succeeded = exitCode === ExitCode.Success;

  const rows: [string, string | number][] = flags.dryRun
    ? [
        ['valid', counts.recordsValid],
        ['invalid', counts.recordsInvalid],
      ]
    : [
        ['sent', counts.recordsSent],
        ['invalid', counts.recordsInvalid],
        ['failed', counts.recordsFailed],
        ['unknown', counts.recordsUnknown],
      ];
  if (!flags.dryRun && (stoppedBy !== undefined || result.interrupted)) {
    rows.push([
      'not read',
      result.unreadUnknown ? `${counts.recordsNotRead} and the rest of stdin` : counts.recordsNotRead,
    ]);
  }
  if (carriedDelivered > 0) rows.push(['already delivered (checkpoint)', counts.recordsSkipped]);
  rows.push(['duration', formatDuration(result.durationMs)]);
  const title = flags.dryRun
    ? `dry run: nothing was sent${stoppedBy ? ' (stopped)' : ''}`
    : result.interrupted
      ? 'publish interrupted'
      : stoppedBy !== undefined
        ? 'publish stopped'
        : 'publish finished';
  output.summary(`${title}\n${formatTable(rows)}`, succeeded);
  if (flags.rejects && (counts.recordsInvalid > 0 || counts.recordsFailed > 0 || counts.recordsUnknown > 0)) {
    output.summary(`rejected rows and unsent records: ${flags.rejects}`, succeeded);
  }
  if (!flags.dryRun && stoppedBy !== undefined && exitCode !== ExitCode.Usage) {
    output.log(
      flags.checkpoint
        ? 'fix the cause and run the same command again: the checkpoint sends only what was not delivered'
        : 'fix the cause and run again; with --checkpoint FILE a re-run sends only what was not delivered',
    );
  }
  output.report({
    ok: exitCode === ExitCode.Success,
    exitCode,
    command: 'finance publish',
    appId: endpoints.appId,
    dryRun: flags.dryRun === true,
    ...counts,
    durationMs: result.durationMs,
    interrupted: result.interrupted,
    stopped: stoppedBy !== undefined,
    inputComplete: result.inputComplete,
    ...(stoppedBy !== undefined && { error: jsonError(stoppedBy, cause) }),
    rejectsFile: flags.rejects,
    checkpointFile: flags.checkpoint,
  });
  return exitCode;
}

/**
 * Without a rejects file, the first invalid rows and why, so that a wrong file or column shows at
 * once. They are the run's errors, so `--quiet` prints them too.
 */
function showInvalid(output: Output, rejects: RejectsWriter): void {
  const always = { evenIfQuiet: true };
  for (const entry of rejects.firstInvalid) {
    const reasons = entry.reasons.map((reason) =>
      reason.field ? `${reason.field}: ${reason.message}` : reason.message,
    );
    output.log(`${entry.file}:${entry.line}: ${reasons.join('; ')}`, always);
  }
  const more = rejects.counts.invalid - rejects.firstInvalid.length;
  if (more > 0) output.log(`… and ${more} more invalid row${more === 1 ? '' : 's'}`, always);
  output.log('write every invalid row with its reason to a file with --rejects FILE', always);
}
