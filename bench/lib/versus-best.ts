/**
 * Rows that hold the SDK against the best of several hand-written scripts run in the same rounds
 * (fixed concurrency 4, 8, 16 and 32): one row against the best, with the target, then one row per
 * script for information. "Best" is the script with the best median; the per-round ratios against
 * it give the range the note reports.
 */
import { makeRow, type Row, type Target } from './row.js';
import { median, ratio } from './stats.js';
import type { WindowTrace } from './window-trace.js';

export interface VersusBest {
  benchmark: string;
  /** What the work is, e.g. `publish 200,000 records`. */
  work: string;
  unit: string;
  /** Whether more is better (throughput) or less (time). */
  higherIsBetter: boolean;
  sdk: number[];
  /** Samples of each script, by its name, in round order like `sdk`'s. */
  scripts: Map<string, number[]>;
  target: Target;
  note?: string;
  trace?: WindowTrace;
}

const range = (values: readonly number[], digits: number) => {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return '—';
  const low = Math.min(...finite).toFixed(digits);
  const high = Math.max(...finite).toFixed(digits);
  return low === high ? low : `${low}–${high}`;
};

export function versusBest(input: VersusBest): Row[] {
  const sdkMedian = median(input.sdk);
  const better = (a: number, b: number) => (input.higherIsBetter ? a > b : a < b);
  let bestName = '';
  let bestMedian = Number.NaN;
  for (const [name, samples] of input.scripts) {
    const value = median(samples);
    if (bestName === '' || better(value, bestMedian)) {
      bestName = name;
      bestMedian = value;
    }
  }
  const best = input.scripts.get(bestName) ?? [];
  const perRound = input.sdk.map((value, i) => ratio(value, best[i] ?? Number.NaN));
  const scriptsText = [...input.scripts].map(([name, samples]) => `${name} ${median(samples).toFixed(0)}`).join(', ');
  const headline = makeRow({
    benchmark: input.benchmark,
    metric: `${input.work}: SDK (defaults) vs the best fixed-concurrency script`,
    unit: input.unit,
    ours: sdkMedian,
    baselineName: `${bestName} (best)`,
    baseline: bestMedian,
    ratio: ratio(sdkMedian, bestMedian),
    target: input.target,
    samples: { ours: input.sdk, baseline: best },
    note: [
      `per-round ratio ${range(perRound, 2)}; SDK ${range(input.sdk, 0)} ${input.unit}; scripts (medians, ${input.unit}): ${scriptsText}`,
      input.note,
    ]
      .filter(Boolean)
      .join('; '),
    ...(input.trace && { trace: input.trace }),
  });
  const each = [...input.scripts].map(([name, samples]) =>
    makeRow({
      benchmark: input.benchmark,
      metric: `${input.work}: SDK vs ${name}`,
      unit: input.unit,
      ours: sdkMedian,
      baselineName: name,
      baseline: median(samples),
      ratio: ratio(sdkMedian, median(samples)),
      samples: { ours: input.sdk, baseline: samples },
    }),
  );
  return [headline, ...each];
}
