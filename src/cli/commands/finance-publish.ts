import { Command } from 'commander';
import { FINANCE_DEFAULTS } from '../../defaults.js';
import { Checkpoint, fingerprintInputs } from '../checkpoint.js';
import { addConnectionOptions, type ConnectionFlags, createClient, resolveConfig } from '../config.js';
import { ExitCode, exitCodeFor, UsageError } from '../exit-codes.js';
import { type CommonFlags, integerOption } from '../options.js';
import { formatDuration, formatTable, Output } from '../output.js';
import { createProgress, rate } from '../progress.js';
import { type PublishRunResult, runPublish } from '../publish-run.js';
import { parseColumnMap } from '../readers/convert.js';
import { parseFormat, resolveInputs } from '../readers/index.js';
import { RejectsWriter } from '../rejects.js';
import { onInterrupt } from '../signals.js';

interface PublishFlags extends ConnectionFlags, CommonFlags {
  app: string;
  format?: string;
  map?: string;
  batchSize: number;
  maxBatchBytes?: number;
  concurrency?: number;
  dryRun?: boolean;
  rejects?: string;
  checkpoint?: string;
  resendUnknown?: boolean;
}

export function financeCommand(): Command {
  const finance = new Command('finance').description('finance records');
  const publish = new Command('publish')
    .description('publish finance records from CSV, JSON Lines or JSON files (- for stdin)')
    .argument('<files...>', 'input files; - reads stdin (needs --format)')
    .requiredOption('--app <appId>', 'application the records belong to')
    .option('--format <format>', 'csv, jsonl or json (default: by file extension)')
    .option('--map <pairs>', 'rename CSV columns or JSON keys, field=Column pairs: vendor=Supplier,amount=Total')
    .option('--batch-size <n>', 'records per request (at most 1000)', integerOption('--batch-size', 1, 1000), 1000)
    .option(
      '--max-batch-bytes <n>',
      'most bytes per request body (default 5 MiB)',
      integerOption('--max-batch-bytes', 1024),
    )
    .option(
      '--concurrency <n>',
      `requests in flight (default ${FINANCE_DEFAULTS.concurrency})`,
      integerOption('--concurrency', 1, 64),
    )
    .option('--retry-ambiguous', 're-send batches whose outcome is unknown (may duplicate records)')
    .option('--dry-run', 'read and validate everything, send nothing')
    .option('--rejects <file>', 'write invalid rows and failed or unknown records to this JSONL file')
    .option('--checkpoint <file>', 'record delivered records here; a re-run with the same input resumes')
    .option('--resend-unknown', 'with --checkpoint: send again records whose outcome was unknown (may duplicate)')
    .option('--json', 'print one JSON report on stdout; human text goes to stderr')
    .option('--verbose', 'show stack traces');
  addConnectionOptions(publish).action(async (files: string[], flags: PublishFlags) => {
    process.exitCode = await publishAction(files, flags);
  });
  return finance.addCommand(publish);
}

async function publishAction(files: string[], flags: PublishFlags): Promise<number> {
  const output = new Output({ json: flags.json === true, verbose: flags.verbose === true });
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
  const config = flags.dryRun ? undefined : await resolveConfig(flags);
  const client = config && createClient(config, { retryAmbiguous: flags.retryAmbiguous === true });
  let checkpoint: Checkpoint | undefined;
  if (flags.checkpoint !== undefined && config !== undefined) {
    const fingerprint = await fingerprintInputs(inputs, { map: [...columnMap] });
    checkpoint = Checkpoint.open(flags.checkpoint, fingerprint, inputs, flags.resendUnknown === true, {
      appId: flags.app,
      baseUrl: config.baseUrl,
    });
  }
  const rejects = new RejectsWriter(flags.rejects);
  const totalBytes = inputs.every((input) => input.size !== undefined)
    ? inputs.reduce((sum, input) => sum + (input.size ?? 0), 0)
    : undefined;
  const started = Date.now();
  const progress = await createProgress(output, flags.dryRun ? 'validate' : 'publish', totalBytes);
  const signals = onInterrupt(
    output,
    'stopping: reading no more input; in-flight batches finish (Ctrl-C again to abort them)',
  );
  let result: PublishRunResult;
  try {
    result = await runPublish({
      appId: flags.app,
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
    await rejects.close();
  }
  return summarize(output, flags, result, checkpoint?.carried().delivered ?? 0);
}

function summarize(output: Output, flags: PublishFlags, result: PublishRunResult, carriedDelivered: number): number {
  const { counts } = result;
  const nothingSent = counts.recordsSent === 0 && counts.batchesFailed === 0 && counts.batchesUnknown === 0;
  let exitCode: number = exitCodeFor(counts, result.fatal !== undefined || result.interrupted);
  // A broken input met before anything was sent is a usage error, like a missing file.
  if (result.fatal?.name === 'InputError' && nothingSent) exitCode = ExitCode.Usage;
  if (result.fatal) output.error(result.fatal.message, result.fatal);
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
  if (carriedDelivered > 0) rows.push(['already delivered (checkpoint)', counts.recordsSkipped]);
  rows.push(['duration', formatDuration(result.durationMs)]);
  const title = flags.dryRun
    ? 'dry run: nothing was sent'
    : result.interrupted
      ? 'publish interrupted'
      : 'publish finished';
  output.result(`${title}\n${formatTable(rows)}`);
  if (flags.rejects && (counts.recordsInvalid > 0 || counts.recordsFailed > 0 || counts.recordsUnknown > 0)) {
    output.result(`rejected rows and unsent records: ${flags.rejects}`);
  }
  output.report({
    ok: exitCode === ExitCode.Success,
    command: 'finance publish',
    appId: flags.app,
    dryRun: flags.dryRun === true,
    ...counts,
    durationMs: result.durationMs,
    interrupted: result.interrupted,
    inputComplete: result.inputComplete,
    error: result.fatal?.message,
    rejectsFile: flags.rejects,
    checkpointFile: flags.checkpoint,
    exitCode,
  });
  return exitCode;
}
