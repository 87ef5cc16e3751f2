import { basename } from 'node:path';
import type { PushClient } from '../client.js';
import { AbortError, PushError } from '../errors.js';
import { stopsTheRun } from '../finance/outcome.js';
import { DEFAULT_UPLOAD_CONCURRENCY } from '../uploads/limits.js';
import type { UploadFileType } from '../uploads/types.js';
import type { UploadProgressView } from './upload-progress.js';

/** What happened to one file of `push-api upload`. */
export interface UploadedFile {
  name: string;
  bytes: number;
  /** `not started`: the run stopped (Ctrl-C, or an error every file would meet) before its turn. */
  status: 'uploaded' | 'failed' | 'not started';
  error?: string;
}

export interface UploadRunOptions {
  appId: string;
  paths: string[];
  sizes: number[];
  type: UploadFileType | undefined;
  concurrency: number | undefined;
  progress: UploadProgressView;
  /** First Ctrl-C: start no more files; those in flight finish. */
  stop: AbortSignal;
  /** Second Ctrl-C: abort the files in flight. */
  abort: AbortSignal;
}

export interface UploadRunResult {
  files: UploadedFile[];
  interrupted: boolean;
  durationMs: number;
}

/**
 * Uploads each file with its own `upload` call, `concurrency` at a time, from worker loops that
 * share one cursor. One call per file is what lets the CLI report every file when it stops: a
 * single call for all files rejects with a bare AbortError on Ctrl-C, and it reports no file as
 * uploaded before the storage host has confirmed all of them. The price is one upload-address
 * request per file.
 */
export async function runUpload(client: PushClient, options: UploadRunOptions): Promise<UploadRunResult> {
  const started = Date.now();
  const { paths, sizes, progress } = options;
  const totalBytes = sizes.reduce((sum, size) => sum + size, 0);
  const sent = new Map<string, number>();
  let bytes = 0;
  const files: (UploadedFile | undefined)[] = new Array(paths.length);
  let stoppedBy: PushError | undefined;
  let cursor = 0;

  async function worker(): Promise<void> {
    while (!options.stop.aborted && stoppedBy === undefined) {
      const index = cursor++;
      if (index >= paths.length) return;
      const path = paths[index] as string;
      const name = basename(path);
      const size = sizes[index] as number;
      try {
        const report = await client.uploads.upload(options.appId, [path], {
          type: options.type,
          signal: options.abort,
          onProgress: (update) => {
            bytes += update.fileBytes - (sent.get(name) ?? 0);
            sent.set(name, update.fileBytes);
            progress.update({ ...update, bytes, totalBytes });
          },
        });
        const [file] = report.files;
        const uploaded = file?.status === 'uploaded';
        files[index] = {
          name,
          bytes: file?.bytes ?? size,
          status: uploaded ? 'uploaded' : 'failed',
          error: uploaded ? undefined : (file?.error?.message ?? 'unknown error'),
        };
        if (uploaded) progress.confirmed(name, size);
      } catch (error) {
        const pushError = error instanceof PushError ? error : undefined;
        files[index] = { name, bytes: size, status: 'failed', error: errorText(error) };
        // Bad credentials or an unknown app: every other file would fail the same way.
        if (pushError && !(pushError instanceof AbortError) && stopsTheRun(pushError)) stoppedBy ??= pushError;
      }
    }
  }

  const workers = Math.min(options.concurrency ?? DEFAULT_UPLOAD_CONCURRENCY, paths.length);
  await Promise.all(Array.from({ length: workers }, worker));
  const reason = stoppedBy ? `not started: the run stopped after ${stoppedBy.message}` : 'not started: interrupted';
  return {
    files: paths.map(
      (path, index) =>
        files[index] ?? { name: basename(path), bytes: sizes[index] as number, status: 'not started', error: reason },
    ),
    interrupted: options.stop.aborted,
    durationMs: Date.now() - started,
  };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
