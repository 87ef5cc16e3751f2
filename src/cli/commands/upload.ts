import { access, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import type { UploadFileType } from '../../uploads/types.js';
import { addConnectionOptions, type ConnectionFlags, createClient, resolveConfig } from '../config.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { type CommonFlags, integerOption } from '../options.js';
import { formatBytes, formatDuration, formatTable, Output } from '../output.js';
import { onInterrupt } from '../signals.js';
import { createUploadProgress } from '../upload-progress.js';
import { runUpload, type UploadRunResult } from '../upload-run.js';

interface UploadFlags extends ConnectionFlags, CommonFlags {
  app: string;
  type?: UploadFileType;
  concurrency?: number;
}

function fileType(value: string): UploadFileType {
  if (value === 'users' || value === 'contracts' || value === 'other') return value;
  throw new InvalidArgumentError('--type must be users, contracts or other');
}

/** Expands globs; a literal path that exists is taken as is, even if it contains glob characters. */
export async function expandPaths(patterns: string[]): Promise<string[]> {
  const { glob, isDynamicPattern } = await import('tinyglobby');
  const paths: string[] = [];
  for (const pattern of patterns) {
    const exists = await access(pattern).then(
      () => true,
      () => false,
    );
    if (exists || !isDynamicPattern(pattern)) {
      const info = await stat(pattern).catch(() => undefined);
      if (info === undefined) throw new UsageError(`${pattern}: no such file`);
      if (!info.isFile()) throw new UsageError(`${pattern}: not a file`);
      paths.push(pattern);
      continue;
    }
    const matches = (await glob(pattern, { onlyFiles: true, expandDirectories: false })).sort();
    if (matches.length === 0) throw new UsageError(`${pattern}: no file matches`);
    paths.push(...matches);
  }
  const unique = [...new Set(paths)];
  const names = new Map<string, string>();
  for (const path of unique) {
    const name = basename(path);
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
    .argument('<files...>', 'files or glob patterns (quote globs so the shell does not expand them)')
    .requiredOption('--app <appId>', 'application the files are for')
    .option('--type <type>', 'users, contracts or other', fileType)
    .option('--concurrency <n>', 'files uploaded at once (default 4)', integerOption('--concurrency', 1, 64))
    .option('--json', 'print one JSON report on stdout; human text goes to stderr')
    .option('--verbose', 'show stack traces');
  return addConnectionOptions(command).action(async (patterns: string[], flags: UploadFlags) => {
    const output = new Output({ json: flags.json === true, verbose: flags.verbose === true });
    const paths = await expandPaths(patterns);
    const client = createClient(await resolveConfig(flags));
    const sizes = await Promise.all(paths.map(async (path) => (await stat(path)).size));
    const progress = await createUploadProgress(
      output,
      sizes.reduce((sum, size) => sum + size, 0),
    );
    const signals = onInterrupt(
      output,
      'stopping: starting no more files; uploads in flight finish (Ctrl-C again to abort them)',
    );
    let run: UploadRunResult;
    try {
      run = await runUpload(client, {
        appId: flags.app,
        paths,
        sizes,
        type: flags.type,
        concurrency: flags.concurrency,
        progress,
        stop: signals.stop,
        abort: signals.abort,
      });
    } finally {
      progress.stop();
      signals.dispose();
    }
    const uploaded = run.files.filter((file) => file.status === 'uploaded');
    const failed = run.files.filter((file) => file.status === 'failed').length;
    const notStarted = run.files.length - uploaded.length - failed;
    const bytesUploaded = uploaded.reduce((sum, file) => sum + file.bytes, 0);
    const rows: [string, string][] = run.files.map((file) => [
      file.name,
      file.status === 'uploaded'
        ? `uploaded ${formatBytes(file.bytes)}`
        : `${file.status === 'failed' ? 'FAILED' : 'NOT STARTED'}: ${file.error ?? 'unknown error'}`,
    ]);
    rows.push([
      'total',
      `${uploaded.length} uploaded, ${failed} failed, ${notStarted} not started, ${formatBytes(bytesUploaded)} in ${formatDuration(run.durationMs)}`,
    ]);
    output.result(`${run.interrupted ? 'upload interrupted' : 'upload finished'}\n${formatTable(rows)}`);
    const exitCode = uploaded.length === run.files.length ? ExitCode.Success : ExitCode.Failure;
    output.report({
      ok: exitCode === ExitCode.Success,
      command: 'upload',
      appId: flags.app,
      files: run.files,
      filesUploaded: uploaded.length,
      filesFailed: failed,
      filesNotStarted: notStarted,
      bytesUploaded,
      durationMs: run.durationMs,
      interrupted: run.interrupted,
      exitCode,
    });
    process.exitCode = exitCode;
  });
}
