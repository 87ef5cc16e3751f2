/** The few statistics the harness reports: medians and ratios, robust to a noisy shared machine. */

/** Median of the samples; NaN for none. */
export function median(samples: readonly number[]): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const upper = sorted[middle] as number;
  return sorted.length % 2 === 1 ? upper : ((sorted[middle - 1] as number) + upper) / 2;
}

/** `ours / baseline`; NaN when the baseline is zero or missing. */
export function ratio(ours: number, baseline: number): number {
  return baseline === 0 || !Number.isFinite(baseline) ? Number.NaN : ours / baseline;
}

/** Bytes to megabytes (10^6 bytes), the unit of the targets: "150 MB" is not relaxed to 150 MiB. */
export function toMB(bytes: number): number {
  return bytes / 1e6;
}
