/** One line of the results: a measured figure, its baseline, and the target it is held to. */
import type { WindowTrace } from './window-trace.js';

export interface Target {
  /** Which figure the target applies to. */
  of: 'value' | 'ratio';
  op: '<=' | '>=' | '==';
  limit: number;
}

export interface Row {
  /** Benchmark number and name, e.g. `1 publish throughput`. */
  benchmark: string;
  /** What this line measures. */
  metric: string;
  unit: string;
  /** Median of our samples. */
  ours: number;
  /** What the baseline is, and the median of its samples. */
  baselineName?: string;
  baseline?: number;
  /** `ours / baseline`, or whatever `ratioLabel` says. */
  ratio?: number;
  ratioLabel?: string;
  target?: Target;
  /** Undefined when the line has no target (reported for information). */
  pass?: boolean;
  samples: { ours: number[]; baseline?: number[] };
  note?: string;
  /** The SDK's in-flight window over one of the row's runs (the network rows), for the plot. */
  trace?: WindowTrace;
}

/** Whether a figure meets its target. */
export function meets(target: Target, row: Pick<Row, 'ours' | 'ratio'>): boolean {
  const figure = target.of === 'ratio' ? row.ratio : row.ours;
  if (figure === undefined || !Number.isFinite(figure)) return false;
  if (target.op === '<=') return figure <= target.limit;
  if (target.op === '>=') return figure >= target.limit;
  return figure === target.limit;
}

/** Builds a row and decides pass/fail from its target. */
export function makeRow(row: Omit<Row, 'pass'>): Row {
  return row.target ? { ...row, pass: meets(row.target, row) } : row;
}
