/** The many-seeds table: one row per seed, then totals. Shared by the script and the test's log. */
import { FAULT_KINDS, type FaultCounts } from './fault-plan.js';
import type { SeedResult } from './run-seed.js';

const COLUMNS = [
  'seed',
  'ambig',
  'rate',
  ...FAULT_KINDS,
  'exp/rev/url',
  'sent',
  'inval',
  'fail',
  'unkn',
  'dups',
  'files',
  'tokens',
  'ms',
  'outcome',
];

function pad(cells: string[]): string {
  return cells.map((cell, i) => cell.padStart(Math.max(COLUMNS[i]?.length ?? 0, i === 0 ? 5 : 4))).join(' ');
}

export function tableHeader(): string {
  return pad(COLUMNS);
}

export function tableRow(r: SeedResult): string {
  return pad([
    String(r.seed),
    r.retryAmbiguous ? 'on' : 'off',
    `${Math.round(r.faultRate * 100)}%`,
    ...FAULT_KINDS.map((kind) => String(r.faults[kind])),
    `${r.disruptions.tokenExpiries}/${r.disruptions.tokenRevocations}/${r.disruptions.signedUrlExpiries}`,
    String(r.buckets.sent),
    String(r.buckets.invalid),
    String(r.buckets.failed),
    String(r.buckets.unknown),
    String(r.duplicates),
    `${r.filesUploaded}/${r.filesUploaded + r.filesFailed}`,
    `${r.tokenRequests}≤${r.tokenBound}`,
    String(r.durationMs),
    r.violations.length === 0 ? 'PASS' : 'FAIL',
  ]);
}

export interface Totals {
  seeds: number;
  passed: number;
  faults: FaultCounts;
  faultTotal: number;
  buckets: { sent: number; invalid: number; failed: number; unknown: number };
  /** Records held more than once, by `retryAmbiguous` setting. */
  duplicates: { off: number; on: number };
  filesUploaded: number;
  filesFailed: number;
}

export function totals(results: SeedResult[]): Totals {
  const faults = Object.fromEntries(FAULT_KINDS.map((kind) => [kind, 0])) as FaultCounts;
  const out: Totals = {
    seeds: results.length,
    passed: 0,
    faults,
    faultTotal: 0,
    buckets: { sent: 0, invalid: 0, failed: 0, unknown: 0 },
    duplicates: { off: 0, on: 0 },
    filesUploaded: 0,
    filesFailed: 0,
  };
  for (const r of results) {
    if (r.violations.length === 0) out.passed += 1;
    for (const kind of FAULT_KINDS) {
      faults[kind] += r.faults[kind];
      out.faultTotal += r.faults[kind];
    }
    out.buckets.sent += r.buckets.sent;
    out.buckets.invalid += r.buckets.invalid;
    out.buckets.failed += r.buckets.failed;
    out.buckets.unknown += r.buckets.unknown;
    out.duplicates[r.retryAmbiguous ? 'on' : 'off'] += r.duplicates;
    out.filesUploaded += r.filesUploaded;
    out.filesFailed += r.filesFailed;
  }
  return out;
}

export function formatTotals(t: Totals, wallMs: number): string {
  const kinds = FAULT_KINDS.map((kind) => `${kind} ${t.faults[kind]}`).join(', ');
  return [
    `seeds: ${t.passed}/${t.seeds} passed, ${t.seeds - t.passed} failed; wall time ${(wallMs / 1000).toFixed(1)} s`,
    `faults injected: ${t.faultTotal} (${kinds})`,
    `records: sent ${t.buckets.sent}, invalid ${t.buckets.invalid}, failed ${t.buckets.failed}, unknown ${t.buckets.unknown}; duplicates ${t.duplicates.off} with retryAmbiguous off, ${t.duplicates.on} with it on`,
    `files: ${t.filesUploaded} uploaded, ${t.filesFailed} failed`,
  ].join('\n');
}
