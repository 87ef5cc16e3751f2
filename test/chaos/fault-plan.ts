/**
 * The injected faults of one seed. Each kind is one probability rule with the seed's random
 * source, over every data operation (upload addresses, PUTs, finance); the token endpoint gets
 * its own, rarer faults. Together the data rules fire on `rate` of requests (10% to 30%).
 */
import type { FaultHandle, FaultRule, PushApiEmulator } from 'push-api-client/testing';

export const FAULT_KINDS = [
  '429+RA',
  '429',
  '503',
  '500',
  '502',
  '504',
  'drop-before',
  'drop-after',
  'slow',
  'token',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];
export type FaultCounts = Record<FaultKind, number>;

export interface FaultPlan {
  /** Chance that a data request meets some fault. */
  rate: number;
  counts(): FaultCounts;
}

const DATA_OPERATIONS: FaultRule['match'] = { operation: ['finance', 'upload-urls', 'upload'] };

/** `slowMs` must exceed the client's timeout, so that a slow answer is a timeout. */
export function installFaults(
  mock: PushApiEmulator,
  random: () => number,
  options: { rate: number; slowMs: number },
): FaultPlan {
  const dataKinds = FAULT_KINDS.filter((kind) => kind !== 'token');
  // Rules are tried in order, so k rules of probability p fire on 1 - (1 - p)^k of requests.
  const p = 1 - (1 - options.rate) ** (1 / dataKinds.length);
  const rules: Record<Exclude<FaultKind, 'token'>, Omit<FaultRule, 'match' | 'probability' | 'random'>> = {
    '429+RA': { status: 429, retryAfter: 1 },
    '429': { status: 429 },
    '503': { status: 503 },
    '500': { status: 500 },
    '502': { status: 502 },
    '504': { status: 504 },
    'drop-before': { drop: 'before' },
    'drop-after': { drop: 'after' },
    slow: { delayMs: options.slowMs },
  };
  const handles = new Map<FaultKind, FaultHandle[]>();
  for (const kind of dataKinds) {
    handles.set(kind, [mock.faults.add({ ...rules[kind], match: DATA_OPERATIONS, probability: p, random })]);
  }
  handles.set('token', [
    mock.faults.add({ match: { operation: 'token' }, status: 503, probability: options.rate / 3, random }),
    mock.faults.add({ match: { operation: 'token' }, drop: 'after', probability: options.rate / 6, random }),
  ]);
  return {
    rate: options.rate,
    counts() {
      const counts = {} as FaultCounts;
      for (const kind of FAULT_KINDS) {
        counts[kind] = (handles.get(kind) ?? []).reduce((sum, handle) => sum + handle.hits, 0);
      }
      return counts;
    },
  };
}
