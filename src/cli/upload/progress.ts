import type { SingleBar } from 'cli-progress';
import type { UploadProgress } from '../../index.js';
import { formatBytes, type Output } from '../output.js';
import { PLAIN_PROGRESS_INTERVAL_MS } from '../progress.js';
import { terminalLine } from '../terminal-text.js';

export interface UploadProgressView {
  update: (progress: UploadProgress) => void;
  /** The storage host confirmed the file: only now is it reported as uploaded. */
  confirmed: (file: string, bytes: number) => void;
  stop: () => void;
}

/**
 * Bytes per file and in total. On a terminal: one bar for the total and one per file while it
 * uploads. Otherwise: a line when the storage host confirms a file (not when its last byte is
 * written: the host may still refuse it) and a total line every few seconds.
 */
export async function createUploadProgress(output: Output, totalBytes: number): Promise<UploadProgressView> {
  if (output.interactive) return bars(output, totalBytes);
  // The monotonic clock: after a wall clock stepped back, lines would stop until it caught up.
  let last = performance.now();
  return {
    update(progress) {
      const now = performance.now();
      if (now - last < PLAIN_PROGRESS_INTERVAL_MS) return;
      last = now;
      output.log(`upload: ${formatBytes(progress.bytes)} of ${formatBytes(progress.totalBytes)} written`);
    },
    confirmed(file, bytes) {
      output.log(`upload: ${file} ${formatBytes(bytes)} uploaded`);
    },
    stop() {},
  };
}

/**
 * cli-progress is loaded only for a terminal: cron and CI runs never pay for it. It writes straight
 * to the stream, so file names (chosen by whoever named the files) are escaped before it sees them.
 */
async function bars(output: Output, totalBytes: number): Promise<UploadProgressView> {
  const { default: cliProgress } = await import('cli-progress');
  const multibar = new cliProgress.MultiBar(
    {
      stream: output.stderr,
      format: '{name} {bar} {percentage}% | {sent} of {size} | ETA {eta_formatted}',
      hideCursor: true,
      clearOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  const total = multibar.create(Math.max(totalBytes, 1), 0, {
    name: 'total',
    sent: '0 B',
    size: formatBytes(totalBytes),
  });
  const files = new Map<string, SingleBar>();
  return {
    update(progress) {
      let bar = files.get(progress.file);
      if (bar === undefined) {
        bar = multibar.create(Math.max(progress.fileTotal, 1), 0, {
          name: terminalLine(progress.file),
          sent: '0 B',
          size: formatBytes(progress.fileTotal),
        });
        files.set(progress.file, bar);
      }
      bar.update(progress.fileBytes, { sent: formatBytes(progress.fileBytes) });
      total.update(progress.bytes, { sent: formatBytes(progress.bytes) });
    },
    confirmed(file, bytes) {
      const bar = files.get(file);
      if (bar !== undefined) multibar.remove(bar);
      files.delete(file);
      multibar.log(`  ${terminalLine(file)} ${formatBytes(bytes)} uploaded\n`);
    },
    stop() {
      multibar.stop();
    },
  };
}
