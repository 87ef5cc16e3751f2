import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { FINANCE_DEFAULTS } from '../../defaults.js';
import { Checkpoint, fingerprintInputs } from '../checkpoint.js';
import {
  addConnectionOptions,
  appOption,
  type ConnectionFlags,
  createClient,
  requireApp,
  resolveConfig,
} from '../config.js';
import { ExitCode, exitCodeFor, UsageError } from '../exit-codes.js';
import { describeStop, jsonError } from '../failure.js';
import { othersMayMoveFilesIn } from '../files.js';
import { installInterrupts } from '../interrupts.js';
import { parseColumnMap, parseSets } from '../normalize/columns.js';
import { rowRules } from '../normalize/rules.js';
import { loadTransform } from '../normalize/transform.js';
import { type CommonFlags, integerOption } from '../options.js';
import { formatDuration, formatTable, Output } from '../output.js';
import { checkOutputPaths, resolveOutputPath } from '../output-paths.js';
import { createProgress, rate } from '../progress.js';
import { InputChangedError } from '../readers/file-identity.js';
import { checkCsvHeaders, type InputSpec, parseFormat, resolveInputs } from '../readers/index.js';
import { InputError, type RowRules } from '../readers/types.js';
import { RejectsWriter } from '../rejects.js';
import { acquireRunFileLock, lockPathFor, type RunFileLock } from '../run-file-lock.js';
import { onInterrupt, STOP_TIMEOUT_FLAG, STOP_TIMEOUT_HELP } from '../signals.js';
import { terminalLine } from '../terminal-text.js';
import { type PublishRunResult, runPublish } from './run.js';
import { closeRunFiles } from './run-files.js';
import { templateCommand } from './template.js';

/** Ignored columns named in the human summary; `--json` lists them all. */
const IGNORED_COLUMNS_SHOWN = 20;
/** Inputs ending with no line break that the summary names, one line each. */
const UNENDED_INPUTS_SHOWN = 5;

/** The most requests in flight unless `--concurrency` says otherwise (the SDK's default). */
const DEFAULT_CONCURRENCY = FINANCE_DEFAULTS.concurrency;

interface PublishFlags extends ConnectionFlags, CommonFlags {
  app?: string;
  stopTimeout?: number;
  format?: string;
  map?: string;
  delimiter?: string;
  batchSize: number;
  maxBatchBytes?: number;
  concurrency?: number;
  fixedConcurrency?: boolean;
  dryRun?: boolean;
  rejects?: string;
  checkpoint?: string;
  resendUnknown?: boolean;
  dateFormat?: string;
  timezone?: string;
  decimal?: string;
  thousands?: string;
  set?: string[];
  strictColumns?: boolean;
  transform?: string;
  encoding?: string;
  requireFinalNewline?: boolean;
  skipLines?: number;
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
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
  appOption(publish, 'application the records belong to (not needed with --dry-run)')
    .option('--format <format>', 'csv, tsv, jsonl or json (default: by file extension)')
    .option('--map <pairs>', 'rename CSV columns or JSON keys, field=Column pairs: vendor=Supplier,amount=Total')
    .option(
      '--set <field=value>',
      'a constant for every row, repeatable: --set type=expense --set currency=EUR',
      collect,
    )
    .option(
      '--date-format <pattern>',
      'how dates are written: DD/MM/YYYY, MM/DD/YYYY, DD.MM.YYYY, YYYY/MM/DD, YYYY-MM-DD, each optionally with HH:mm or HH:mm:ss; or unix, unix-ms (default: ISO 8601 or Unix ms)',
    )
    .option(
      '--timezone <zone>',
      'IANA time zone, or a fixed offset such as +01:00, of dates and times without an offset (default: UTC)',
    )
    .option('--decimal <char>', 'decimal separator in amounts: . or , (default: .)')
    .option('--thousands <char>', "thousands separator in amounts: , . ' or space (default: none)")
    .option('--strict-columns', 'refuse CSV columns that fill no field, instead of ignoring them')
    .option(
      '--skip-lines <n>',
      "lines before a CSV file's header to skip, such as an export's title and account lines (line numbers stay the file's)",
      integerOption('--skip-lines', 0, 10_000),
    )
    .option(
      '--require-final-newline',
      'refuse a CSV row that ends the input with no line break after it (a producer killed mid-write leaves one cut short)',
    )
    .option(
      '--transform <module>',
      'a .mjs, .js or .cjs module whose default export turns each raw row into a record, or null to skip it',
    )
    .option(
      '--delimiter <char>',
      'CSV cell separator: , ; tab or any one character (default: from the header)',
      delimiterOption,
    )
    .option(
      '--encoding <name>',
      'character encoding of CSV and TSV files: utf-8, utf-16le, utf-16be, or a code page such as windows-1252 (what Excel saves as plain CSV in Western Europe) or iso-8859-2 (default: utf-8, or UTF-16 by its byte-order mark)',
    )
    .option('--batch-size <n>', 'records per request (at most 1000)', integerOption('--batch-size', 1, 1000), 1000)
    .option(
      '--max-batch-bytes <n>',
      'most bytes per request body (default 5 MiB)',
      integerOption('--max-batch-bytes', 1024),
    )
    .option(
      '--concurrency <n>',
      `most requests in flight; the window adapts to the service up to this (default ${DEFAULT_CONCURRENCY})`,
      integerOption('--concurrency', 1, 64),
    )
    .option(
      '--fixed-concurrency',
      'up to --concurrency requests in flight, no adaptive window and no shared pause after a 429',
    )
    .option('--retry-ambiguous', 're-send batches whose outcome is unknown (may duplicate records)')
    .option('--dry-run', 'read and validate everything, send nothing')
    .option('--rejects <file>', 'write invalid rows and failed or unknown records to this JSONL file')
    .option('--checkpoint <file>', 'record delivered records here; a re-run with the same input resumes')
    .option('--resend-unknown', 'with --checkpoint: send again records whose outcome was unknown (may duplicate)')
    .option(STOP_TIMEOUT_FLAG, STOP_TIMEOUT_HELP, integerOption('--stop-timeout', 1, 86_400))
    .option('--json', 'print one JSON report on stdout; human text goes to stderr')
    .option(
      '--verbose',
      'print one line per HTTP attempt and per change of the in-flight window on stderr, and stack traces for errors',
    )
    .option('--quiet', 'print only errors: no progress and no summary');
  addConnectionOptions(publish).action(async (files: string[], flags: PublishFlags) => {
    process.exitCode = await publishAction(files, flags);
  });
  return finance.addCommand(publish).addCommand(templateCommand());
}

async function publishAction(files: string[], flags: PublishFlags): Promise<number> {
  const output = new Output({
    json: flags.json === true,
    verbose: flags.verbose === true,
    quiet: flags.quiet === true,
  });
  // A dry run sends nothing, so it needs no application, as it needs no credentials.
  const appId = flags.dryRun ? (flags.app ?? '') : requireApp(flags.app);
  const format = flags.format === undefined ? undefined : parseFormat(flags.format);
  const rules = await readingRules(flags);
  const inputs = await resolveInputs(files, format);
  const json = inputs.find((input) => input.format !== 'csv');
  if (json !== undefined && rules.encoding !== undefined && rules.encoding.name !== 'utf-8') {
    throw new UsageError(`--encoding reads CSV and TSV files; ${json.name} is JSON, which is always UTF-8`);
  }
  if (json !== undefined && rules.skipLines !== undefined) {
    throw new UsageError(`--skip-lines skips the lines above a CSV or TSV file's header; ${json.name} is JSON`);
  }
  if (flags.clientSecretStdin && inputs.some((input) => input.path === '-')) {
    throw new UsageError('--client-secret-stdin cannot be combined with reading records from stdin (-)');
  }
  if (flags.resendUnknown && flags.checkpoint === undefined)
    throw new UsageError('--resend-unknown needs --checkpoint');
  // A dry run delivers nothing, so it has nothing to checkpoint; accepting the flag would suggest otherwise.
  if (flags.dryRun && flags.checkpoint !== undefined)
    throw new UsageError('--checkpoint cannot be used with --dry-run');
  const paths = outputPaths(inputs, flags);
  if (paths.checkpoint !== undefined) noteSharedCheckpointDirectory(output, paths.checkpoint);
  await checkCsvHeaders(inputs, rules, flags.delimiter);
  // Taken before the token request and before the input is fingerprinted: a second run stops at once.
  const locks: RunFileLock[] = [];
  try {
    if (paths.checkpoint !== undefined) locks.push(acquireRunFileLock(paths.checkpoint, '--checkpoint'));
    if (paths.rejects !== undefined) locks.push(acquireRunFileLock(paths.rejects, '--rejects'));
    return await publishLocked(inputs, flags, output, rules, paths, appId);
  } finally {
    for (const lock of locks) lock.release();
  }
}

/**
 * A checkpoint in a directory others may change (a group's shared directory, mode 0775) can be
 * moved away or replaced between runs, and the next run would send its records again: said once,
 * not refused, since such directories are how teams share a pipeline's files.
 */
function noteSharedCheckpointDirectory(output: Output, checkpoint: string): void {
  const directory = dirname(checkpoint);
  const info = statSync(directory);
  if (!othersMayMoveFilesIn(info)) return;
  const mode = (info.mode & 0o7777).toString(8).padStart(4, '0');
  output.log(
    `push-api: note: ${terminalLine(directory)} (mode ${mode}) lets other users move or replace the checkpoint; a re-run that finds none sends every record again. Keep checkpoints in a directory only you can write, or a sticky one`,
  );
}

/**
 * The files a run writes, resolved and checked before anything is sent: never an input, never each
 * other (nor the checkpoint's lock), never a FIFO, device or directory.
 */
function outputPaths(inputs: InputSpec[], flags: PublishFlags): { rejects?: string; checkpoint?: string } {
  const checkpoint =
    flags.checkpoint && resolveOutputPath('--checkpoint', flags.checkpoint, { readBack: true }).resolved;
  const rejects = flags.rejects && resolveOutputPath('--rejects', flags.rejects).resolved;
  const checked = checkOutputPaths(
    inputs.map((input) => input.path),
    [
      { option: '--checkpoint', path: flags.checkpoint, readBack: true },
      // The locks' holders are read back too: a planted one could claim a live run forever.
      { option: '--checkpoint lock', path: checkpoint && lockPathFor(checkpoint), readBack: true },
      { option: '--rejects', path: flags.rejects },
      { option: '--rejects lock', path: rejects && lockPathFor(rejects), readBack: true },
    ],
  );
  const find = (option: string) => checked.find((output) => output.option === option)?.resolved;
  return { rejects: find('--rejects'), checkpoint: find('--checkpoint') };
}

async function publishLocked(
  inputs: InputSpec[],
  flags: PublishFlags,
  output: Output,
  rules: RowRules,
  paths: { rejects?: string; checkpoint?: string },
  appId: string,
): Promise<number> {
  const config = flags.dryRun ? undefined : await resolveConfig(flags);
  const client =
    config && (await createClient(config, { retryAmbiguous: flags.retryAmbiguous === true, verbose: flags.verbose }));
  let checkpoint: Checkpoint | undefined;
  if (flags.checkpoint !== undefined && config !== undefined) {
    const fingerprint = await fingerprintInputs(inputs, readingFingerprint(flags, rules), installInterrupts().stop);
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
    flags.stopTimeout,
  );
  const rejects = new RejectsWriter(paths.rejects);
  const totalBytes = inputs.every((input) => input.size !== undefined)
    ? inputs.reduce((sum, input) => sum + (input.size ?? 0), 0)
    : undefined;
  const started = performance.now();
  const progress = await createProgress(output, flags.dryRun ? 'validate' : 'publish', totalBytes);
  let result: PublishRunResult | undefined;
  try {
    result = await runPublish({
      appId,
      inputs,
      rules,
      batchSize: flags.batchSize,
      maxBatchBytes: flags.maxBatchBytes,
      concurrency: flags.concurrency,
      adaptive: flags.fixedConcurrency !== true,
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
    // A file the disk refused now stops the run like any other error: the report keeps its counts.
    const unwritten = await closeRunFiles(checkpoint, rejects);
    if (result !== undefined && unwritten !== undefined) result.stoppedBy ??= unwritten;
  }
  // A signal before the report makes the run interrupted, even one that came after the last batch:
  // the exit code is 130 whatever moment the signal chose.
  if (signals.stop.aborted) result.interrupted = true;
  const endpoints = { authUrl: config?.authUrl, baseUrl: config?.baseUrl, appId };
  const notes = { ignoredColumns: [...rules.ignoredColumns], rowsWithoutFinalNewline: rules.rowsWithoutFinalNewline };
  return summarize(output, flags, result, rejects, checkpoint?.carried().delivered ?? 0, endpoints, notes);
}

/**
 * The reading options compiled once, before any input is read: each bad value (an unknown token
 * in `--date-format`, an unknown zone, a `--set` of an unknown field, a transform that does not
 * load) is a usage error naming its option, and nothing is sent.
 */
async function readingRules(flags: PublishFlags): Promise<RowRules> {
  if (flags.transform !== undefined && flags.map !== undefined) {
    throw new UsageError('--map cannot be used with --transform: the transform names the fields itself');
  }
  if (flags.transform !== undefined && flags.strictColumns) {
    throw new UsageError('--strict-columns cannot be used with --transform: the transform chooses the columns');
  }
  const columnMap = parseColumnMap(flags.map);
  const sets = parseSets(flags.set);
  const rules = rowRules({
    columnMap,
    sets,
    strictColumns: flags.strictColumns,
    dateFormat: flags.dateFormat,
    timeZone: flags.timezone,
    decimal: flags.decimal,
    thousands: flags.thousands,
    encoding: flags.encoding,
    requireFinalNewline: flags.requireFinalNewline,
    skipLines: flags.skipLines,
  });
  if (flags.transform !== undefined) rules.transform = await loadTransform(flags.transform);
  return rules;
}

/**
 * Everything that changes which records a file makes, so that a checkpoint from other options is
 * not resumed: its record numbering could differ. `rules` names the version of the reading rules
 * (case-insensitive headers, ignored columns, trimming): a checkpoint written under older rules
 * numbered records differently.
 */
function readingFingerprint(flags: PublishFlags, rules: RowRules): unknown {
  return {
    rules: 2,
    map: [...rules.columns.columnMap],
    delimiter: flags.delimiter,
    format: flags.format,
    set: flags.set,
    dateFormat: flags.dateFormat,
    timezone: flags.timezone,
    decimal: flags.decimal,
    thousands: flags.thousands,
    transform: flags.transform,
    // Only an encoding other than the default changes which rows are valid.
    encoding: rules.encoding?.name === 'utf-8' ? undefined : rules.encoding?.name,
    // Left out unless given, so that checkpoints written before the option still resume.
    finalNewline: rules.requireFinalNewline === true ? 'required' : undefined,
    skipLines: rules.skipLines,
  };
}

/** What reading the inputs noticed that is no error: the summary and the JSON report name it. */
interface ReadingNotes {
  ignoredColumns: string[];
  rowsWithoutFinalNewline: { file: string; line: number }[];
}

function summarize(
  output: Output,
  flags: PublishFlags,
  result: PublishRunResult,
  rejects: RejectsWriter,
  carriedDelivered: number,
  endpoints: { authUrl?: string; baseUrl?: string; appId: string },
  notes: ReadingNotes,
): number {
  const { ignoredColumns, rowsWithoutFinalNewline } = notes;
  const { counts, stoppedBy } = result;
  const nothingSent = counts.recordsSent === 0 && counts.batchesFailed === 0 && counts.batchesUnknown === 0;
  let exitCode: number = exitCodeFor(counts, { stopped: stoppedBy !== undefined, interrupted: result.interrupted });
  // A broken input met before anything was sent is an input error, like a missing file.
  if (stoppedBy instanceof InputError && nothingSent && !result.interrupted) exitCode = ExitCode.Usage;
  // An empty file is almost always the wrong file, or an export that failed: never a silent success.
  const noRecords = counts.rowsRead === 0 && stoppedBy === undefined && !result.interrupted;
  if (noRecords) {
    exitCode = ExitCode.Partial;
    output.error('no records: the input has no rows');
  }
  const cause = stoppedBy === undefined ? undefined : describeStop(stoppedBy, endpoints, 'publish');
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
      result.unreadRestOf === undefined
        ? counts.recordsNotRead
        : `${counts.recordsNotRead} and the rest of ${result.unreadRestOf === '<stdin>' ? 'stdin' : result.unreadRestOf}`,
    ]);
  }
  if (counts.recordsFiltered > 0 || flags.transform !== undefined) rows.push(['filtered', counts.recordsFiltered]);
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
  if (ignoredColumns.length > 0) {
    // A hostile header can have thousands of columns: the summary names the first few (--json has all).
    const shown = ignoredColumns.slice(0, IGNORED_COLUMNS_SHOWN).map((name) => JSON.stringify(name));
    const more = ignoredColumns.length - shown.length;
    const names = `${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
    output.summary(`ignored columns (they fill no field; --strict-columns refuses them): ${names}`, succeeded);
  }
  // With --require-final-newline the row is an invalid row, shown with its reason like the others.
  if (!flags.requireFinalNewline) {
    // A glob of exports from a tool that never writes a final line break names every file: the
    // summary names the first few (--json has all).
    for (const { file, line } of rowsWithoutFinalNewline.slice(0, UNENDED_INPUTS_SHOWN)) {
      output.summary(
        `${terminalLine(file)} ends with no line break after its last row (line ${line}), which was read as it is: if the file was cut short while it was written, that row may be cut too (--require-final-newline refuses such a row)`,
        succeeded,
      );
    }
    const more = rowsWithoutFinalNewline.length - UNENDED_INPUTS_SHOWN;
    if (more > 0) {
      output.summary(
        `and ${more} more inputs end with no line break after their last row (rowsWithoutFinalNewline in --json lists them)`,
        succeeded,
      );
    }
  }
  if (rejects.written && (counts.recordsInvalid > 0 || counts.recordsFailed > 0 || counts.recordsUnknown > 0)) {
    output.summary(`rejected rows and unsent records: ${flags.rejects}`, succeeded);
  }
  if (stoppedBy instanceof InputChangedError) output.log(afterInputChanged(flags.checkpoint !== undefined));
  else if (!flags.dryRun && stoppedBy !== undefined && exitCode !== ExitCode.Usage) {
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
    ignoredColumns,
    rowsWithoutFinalNewline,
    durationMs: result.durationMs,
    interrupted: result.interrupted,
    stopped: stoppedBy !== undefined,
    inputComplete: result.inputComplete,
    ...(stoppedBy !== undefined && { error: jsonError(stoppedBy, cause) }),
    // Only a file that is there: one the disk refused is named in `error` instead.
    rejectsFile: rejects.written ? flags.rejects : undefined,
    checkpointFile: flags.checkpoint,
  });
  return exitCode;
}

/**
 * What to do once an input changed under the run. Sending the changed file in full could store
 * again what was delivered from the file as it was, and this API has no idempotency key.
 */
function afterInputChanged(checkpoint: boolean): string {
  const wait =
    'publish a file only once whatever writes it has finished (an exporter should write under another name and rename the finished file into place)';
  return checkpoint
    ? `${wait}. The checkpoint keeps what was delivered and resumes only the file as it was when this run started; for other content it is refused (exit 2): check what the service already holds before you publish that file with a new checkpoint`
    : `${wait}. The records counted as sent are stored: check what the service already holds before you publish the file again`;
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
