import { existsSync } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { AbortError, type UploadFileType, type UploadReport, UploadStoppedError } from '../../index.js';
import { fileNameProblem } from '../../internal/text.js';
import { DEFAULT_UPLOAD_CONCURRENCY } from '../../uploads/limits.js';
import {
  addConnectionOptions,
  appOption,
  type ConnectionFlags,
  createClient,
  requireApp,
  resolveConfig,
} from '../config.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { describeStop, jsonError } from '../failure.js';
import { type CommonFlags, integerOption } from '../options.js';
import { formatBytes, formatDuration, formatTable, Output } from '../output.js';
import { foreignLinkOnPath } from '../path-links.js';
import { onInterrupt, STOP_TIMEOUT_FLAG, STOP_TIMEOUT_HELP } from '../signals.js';
import { createUploadProgress } from './progress.js';

interface UploadFlags extends ConnectionFlags, CommonFlags {
  app?: string;
  type?: UploadFileType;
  concurrency?: number;
  fixedConcurrency?: boolean;
  stopTimeout?: number;
}

function fileType(value: string): UploadFileType {
  if (value === 'users' || value === 'contracts' || value === 'other') return value;
  throw new InvalidArgumentError('--type must be users, contracts or other');
}

/**
 * Refuses a file reached through a link another user owns: in a shared directory, that user
 * chooses what is uploaded, and may point it at a file only this user can read.
 */
function refuseForeignLinks(path: string): void {
  const found = foreignLinkOnPath(path);
  if (found === undefined) return;
  if (found.kind === 'too-many-links') throw new UsageError(`${path}: too many links in the path`);
  const where = found.link === resolve(path) ? 'is a link' : `goes through ${found.link}, a link`;
  throw new UsageError(`${path}: ${where} owned by another user (uid ${found.owner}); name the file itself`);
}

/**
 * Expands globs; a literal path that exists is taken as is, even if it contains glob characters.
 * Every file, given or matched, is checked for links planted by another user.
 */
async function expandPaths(patterns: string[]): Promise<string[]> {
  const { glob, isDynamicPattern } = await import('tinyglobby');
  const paths: string[] = [];
  for (const pattern of patterns) {
    const exists = await access(pattern).then(
      () => true,
      () => false,
    );
    if (exists || !isDynamicPattern(pattern)) {
      const info = await stat(pattern).catch(() => undefined);
      if (info === undefined && pattern.includes('\uFFFD'))
        throw new UsageError(
          `${pattern}: no such file; a name that is not valid UTF-8 cannot be named: rename the file`,
        );
      if (info === undefined) throw new UsageError(`${pattern}: no such file`);
      if (info.isDirectory()) {
        const glob = `${pattern.replace(/[\\/]+$/, '')}/*`;
        throw new UsageError(`${pattern}: is a directory; to upload the files in it, quote a glob: '${glob}'`);
      }
      if (!info.isFile()) throw new UsageError(`${pattern}: not a file`);
      paths.push(pattern);
      continue;
    }
    const matches = (await glob(pattern, { onlyFiles: true, expandDirectories: false })).sort();
    if (matches.length === 0) throw new UsageError(`${pattern}: no file matches`);
    paths.push(...matches);
  }
  const unique = [...new Set(paths)];
  // A name that is not valid UTF-8 on disk (a zip from Windows) reaches Node with U+FFFD in it,
  // and that path no longer opens: say why instead of "no such file".
  for (const path of unique) {
    if (basename(path).includes('\uFFFD') && !existsSync(path))
      throw new UsageError(`${path}: the file name is not valid UTF-8; rename the file`);
  }
  for (const path of unique) refuseForeignLinks(path);
  const names = new Map<string, string>();
  for (const path of unique) {
    const name = basename(path);
    // Refused here rather than by the upload: a name the service cannot take is the input's fault
    // (exit 2), and the message names the path.
    const problem = fileNameProblem(name);
    if (problem !== undefined) throw new UsageError(`${path}: this file name cannot be uploaded: it ${problem}`);
    const other = names.get(name);
    // The service stores files by name, so two files with one name would overwrite each other.
    if (other !== undefined) throw new UsageError(`${other} and ${path} would both be uploaded as "${name}"`);
    names.set(name, path);
  }
  return unique;
}

export function uploadCommand(): Command {
  const command = new Command('upload')
    .description('upload batch files (paths or globs) to signed upload addresses')
    .argument('<files...>', 'files or glob patterns (quote globs so the shell does not expand them)');
  appOption(command, 'application the files are for')
    .option('--type <type>', 'users, contracts or other', fileType)
    .option(
      '--concurrency <n>',
      `most files uploaded at once; the window adapts to the storage host below this (default ${DEFAULT_UPLOAD_CONCURRENCY})`,
      integerOption('--concurrency', 1, 64),
    )
    .option('--fixed-concurrency', 'up to --concurrency files at once, no adaptive window')
    .option(STOP_TIMEOUT_FLAG, STOP_TIMEOUT_HELP, integerOption('--stop-timeout', 1, 86_400))
    .option('--json', 'print one JSON report on stdout; human text goes to stderr')
    .option(
      '--verbose',
      'print one line per HTTP attempt and per change of the in-flight window on stderr, and stack traces for errors',
    )
    .option('--quiet', 'print only errors: no progress and no summary');
  return addConnectionOptions(command).action(async (patterns: string[], flags: UploadFlags) => {
    process.exitCode = await uploadAction(patterns, flags);
  });
}

async function uploadAction(patterns: string[], flags: UploadFlags): Promise<number> {
  const output = new Output({
    json: flags.json === true,
    verbose: flags.verbose === true,
    quiet: flags.quiet === true,
  });
  const appId = requireApp(flags.app);
  const paths = await expandPaths(patterns);
  const config = await resolveConfig(flags);
  const client = await createClient(config, { verbose: flags.verbose });
  const sizes = await Promise.all(paths.map(async (path) => (await stat(path)).size));
  const progress = await createUploadProgress(
    output,
    sizes.reduce((sum, size) => sum + size, 0),
  );
  const signals = onInterrupt(
    output,
    'stopping: starting no more files; uploads in flight finish (Ctrl-C or SIGTERM again to abort them)',
    flags.stopTimeout,
  );
  let report: UploadReport;
  let stoppedBy: unknown;
  try {
    report = await client.uploads.upload(appId, paths, {
      type: flags.type,
      concurrency: flags.concurrency,
      adaptive: flags.fixedConcurrency !== true,
      signal: signals.abort,
      // The first signal starts no more files, and a file waiting to be sent again gives up with
      // its last answer: a scheduler's grace period must not be spent on a Retry-After.
      stopSignal: signals.stop,
      onProgress: (update) => progress.update(update),
      onFileSettled: (file) => {
        if (file.status === 'uploaded') progress.confirmed(file.name, file.bytes);
      },
    });
  } catch (error) {
    if (!(error instanceof UploadStoppedError)) throw error;
    report = error.report;
    // After a Ctrl-C, the cause is the stop's AbortError, unless the service's error stopped the
    // run as well: that one is reported (as `finance publish` does).
    stoppedBy = error.cause;
  } finally {
    progress.stop();
    signals.dispose();
  }
  // A signal before the report makes the run interrupted, even one that came after the last file
  // started: the exit code is 130 whatever moment the signal chose.
  const interrupted = signals.stop.aborted;
  const stopped = stoppedBy !== undefined && !(interrupted && stoppedBy instanceof AbortError);
  const cause = stopped ? describeStop(stoppedBy, { ...config, appId }, 'upload') : undefined;
  if (stopped) output.error(cause as string, stoppedBy);

  const rows: [string, string][] = report.files.map((file) => [
    file.name,
    file.status === 'uploaded'
      ? `uploaded ${formatBytes(file.bytes)}`
      : file.status === 'failed'
        ? `FAILED: ${file.error?.message ?? 'unknown error'}`
        : 'NOT STARTED',
  ]);
  rows.push([
    'total',
    `${report.filesUploaded} uploaded, ${report.filesFailed} failed, ${report.filesNotStarted} not started, ${formatBytes(report.bytesUploaded)} in ${formatDuration(report.durationMs)}`,
  ]);
  const title = interrupted ? 'upload interrupted' : stopped ? 'upload stopped' : 'upload finished';
  const exitCode = interrupted
    ? ExitCode.Interrupted
    : stopped
      ? ExitCode.Stopped
      : report.filesFailed > 0
        ? ExitCode.Partial
        : ExitCode.Success;
  output.summary(`${title}\n${formatTable(rows)}`, exitCode === ExitCode.Success);
  output.report({
    ok: exitCode === ExitCode.Success,
    exitCode,
    command: 'upload',
    appId,
    files: report.files.map((file) => ({
      name: file.name,
      bytes: file.bytes,
      status: file.status,
      attempts: file.attempts,
      ...(file.requestId !== undefined && { requestId: file.requestId }),
      ...(file.error !== undefined && { error: file.error.message }),
    })),
    filesUploaded: report.filesUploaded,
    filesFailed: report.filesFailed,
    filesNotStarted: report.filesNotStarted,
    bytesUploaded: report.bytesUploaded,
    durationMs: report.durationMs,
    interrupted,
    stopped,
    ...(stopped && { error: jsonError(stoppedBy, cause) }),
  });
  return exitCode;
}
