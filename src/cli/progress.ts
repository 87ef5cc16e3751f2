import { formatBytes, type Output } from './output.js';
import { terminalLine } from './terminal-text.js';

/** Plain progress lines off a terminal come at most this often, so CI and cron logs stay readable. */
export const PLAIN_PROGRESS_INTERVAL_MS = 2000;

/** Live progress of one run: a bar on a terminal, a plain line every few seconds otherwise. */
export interface Progress {
  /** `done` and `total` in the bar's unit; `detail` is the rest of the line. */
  update(done: number, detail: string): void;
  stop(): void;
}

/**
 * @param total the size of the work (bytes of input or bytes to upload); undefined when unknown (stdin).
 * @param unit 'bytes' shows sizes; 'records' shows counts.
 */
export async function createProgress(
  output: Output,
  label: string,
  total: number | undefined,
  intervalMs = PLAIN_PROGRESS_INTERVAL_MS,
): Promise<Progress> {
  if (output.interactive) return barProgress(output, label, total);
  return plainProgress(output, label, total, intervalMs);
}

/** cli-progress is loaded only for a terminal: cron and CI runs never pay for it. */
async function barProgress(output: Output, label: string, total: number | undefined): Promise<Progress> {
  const { default: cliProgress } = await import('cli-progress');
  const known = total !== undefined && total > 0;
  // cli-progress writes straight to the stream: what it prints of ours is escaped here.
  const safeLabel = terminalLine(label);
  const bar = new cliProgress.SingleBar(
    {
      stream: output.stderr,
      // The bar measures input read, not records confirmed: the counts in {detail} are the settled ones.
      format: known
        ? `${safeLabel} {bar} {percentage}% of input read | {detail} | ETA {eta_formatted}`
        : `${safeLabel} {detail}`,
      hideCursor: true,
      clearOnComplete: false,
      etaBuffer: 50,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(known ? total : 1, 0, { detail: '' });
  return {
    update(done, detail) {
      bar.update(known ? Math.min(done, total) : 0, { detail: terminalLine(detail) });
    },
    stop() {
      bar.stop();
    },
  };
}

function plainProgress(output: Output, label: string, total: number | undefined, intervalMs: number): Progress {
  // The monotonic clock: after a wall clock stepped back, lines would stop until it caught up.
  let last = performance.now();
  return {
    update(done, detail) {
      const now = performance.now();
      if (now - last < intervalMs) return;
      last = now;
      const share =
        total !== undefined && total > 0
          ? ` (${Math.min(100, Math.floor((done / total) * 100))}% of ${formatBytes(total)} read)`
          : '';
      output.log(`${label}: ${detail}${share}`);
    },
    stop() {},
  };
}

/** Records per second over the run so far; `startedAt` is a `performance.now()` reading. */
export function rate(count: number, startedAt: number): string {
  const seconds = (performance.now() - startedAt) / 1000;
  return seconds > 0 ? `${Math.round(count / seconds)}/s` : '-';
}
