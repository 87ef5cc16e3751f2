/** The markdown table printed at the end of a run (and generated into docs/performance.md). */
import type { Row, Target } from './row.js';

function figure(value: number | undefined, unit = ''): string {
  if (value === undefined || Number.isNaN(value)) return '—';
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  const text = value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });
  return unit ? `${text} ${unit}` : text;
}

function targetText(target: Target | undefined, unit: string): string {
  if (!target) return '—';
  const op = target.op === '<=' ? '≤' : target.op === '>=' ? '≥' : '=';
  return target.of === 'ratio' ? `ratio ${op} ${target.limit}` : `${op} ${figure(target.limit, unit)}`;
}

function verdict(pass: boolean | undefined): string {
  return pass === undefined ? 'info' : pass ? 'pass' : '**FAIL**';
}

export function markdownTable(rows: readonly Row[]): string {
  const lines = ['| benchmark | metric | ours | baseline | ratio | target | result |', '|---|---|--:|---|--:|---|---|'];
  for (const row of rows) {
    const baseline =
      row.baselineName === undefined ? '—' : `${row.baselineName}: ${figure(row.baseline, row.unit)}`.trim();
    const ratio = row.ratio === undefined ? '—' : `${figure(row.ratio)}${row.ratioLabel ? ` ${row.ratioLabel}` : '×'}`;
    lines.push(
      `| ${row.benchmark} | ${row.metric} | ${figure(row.ours, row.unit)} | ${baseline} | ${ratio} | ${targetText(row.target, row.unit)} | ${verdict(row.pass)} |`,
    );
  }
  return lines.join('\n');
}
