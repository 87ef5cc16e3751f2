import { describe, expect, it } from 'vitest';
import { alternate } from '../../bench/lib/alternate.js';
import { parseArgs } from '../../bench/lib/args.js';
import { networkSettings } from '../../bench/lib/network-settings.js';
import { makeRow } from '../../bench/lib/row.js';
import { median, ratio, toMB } from '../../bench/lib/stats.js';
import { markdownTable } from '../../bench/lib/table.js';

describe('bench statistics', () => {
  it('takes the middle sample, or the mean of the two middle ones', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('divides ours by the baseline, and gives NaN for a zero baseline', () => {
    expect(ratio(115, 100)).toBeCloseTo(1.15);
    expect(ratio(1, 0)).toBeNaN();
  });

  it('reports memory in megabytes of 10^6 bytes, as the targets are written', () => {
    expect(toMB(150_000_000)).toBe(150);
  });
});

describe('bench rows', () => {
  it('passes a ratio target only when the ratio meets it', () => {
    const base = { benchmark: '1 x', metric: 'm', unit: 'ms', samples: { ours: [1] } };
    const target = { of: 'ratio', op: '<=', limit: 1.15 } as const;
    expect(makeRow({ ...base, ours: 1, ratio: 1.1, target }).pass).toBe(true);
    expect(makeRow({ ...base, ours: 1, ratio: 1.2, target }).pass).toBe(false);
    expect(makeRow({ ...base, ours: 1, ratio: Number.NaN, target }).pass).toBe(false);
    expect(makeRow({ ...base, ours: 1 }).pass).toBeUndefined();
  });

  it('prints one markdown line per row under the header', () => {
    const row = makeRow({
      benchmark: '3 upload',
      metric: 'peak RSS',
      unit: 'MB',
      ours: 95.4,
      target: { of: 'value', op: '<=', limit: 120 },
      samples: { ours: [95.4] },
    });
    const lines = markdownTable([row]).split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('| 3 upload | peak RSS | 95.4 MB | — | — | ≤ 120 MB | pass |');
  });
});

describe("the network rows' settings", () => {
  it('default to a 50 ms round trip, 50 MB/s per connection and 20 ms + 0.02 ms per record', () => {
    expect(networkSettings({})).toEqual({
      proxy: { oneWayDelayMs: 25, bytesPerSecond: 50e6, handshakeRoundTrips: 1 },
      serverTime: { baseMs: 20, perRecordMs: 0.02 },
    });
  });

  it('are read from the environment, 0 MB/s meaning no cap, and refuse what is not a number', () => {
    const settings = networkSettings({ BENCH_NET_ONE_WAY_MS: '50', BENCH_NET_MBPS: '0' });
    expect(settings.proxy).toMatchObject({ oneWayDelayMs: 50, bytesPerSecond: null });
    expect(() => networkSettings({ BENCH_NET_SERVER_MS: 'fast' })).toThrow(/BENCH_NET_SERVER_MS/);
    expect(() => networkSettings({ BENCH_NET_ONE_WAY_MS: '-1' })).toThrow(/from 0 to 60000/);
    // A delay Node's timers cannot hold would silently become none.
    expect(() => networkSettings({ BENCH_NET_ONE_WAY_MS: '3e9' })).toThrow(/from 0 to 60000/);
  });
});

describe('bench runner', () => {
  it('alternates the variants and rotates who goes first in each round', async () => {
    const order: string[] = [];
    const variant = (name: string) => ({ name, run: async () => order.push(name) });
    const samples = await alternate(2, [variant('a'), variant('b')]);
    expect(order).toEqual(['a', 'b', 'b', 'a']);
    expect(samples.get('a')).toHaveLength(2);
  });

  it('parses --quick, --only, --skip and --out, and refuses unknown flags', () => {
    expect(parseArgs(['--quick', '--only', 'token,upload'])).toMatchObject({ quick: true, only: ['token', 'upload'] });
    expect(parseArgs(['--quick', '--skip', 'network,soak'])).toMatchObject({ only: [], skip: ['network', 'soak'] });
    expect(parseArgs([]).out).toBe('bench/results/latest.json');
    // A quick smoke run never overwrites the full run that docs/performance.md quotes.
    expect(parseArgs(['--quick']).out).toBe('bench/results/quick.json');
    expect(parseArgs(['--quick', '--out', 'x.json']).out).toBe('x.json');
    // The network rows, run alone, keep their own results file, which their docs section quotes.
    expect(parseArgs(['--only', 'network']).out).toBe('bench/results/network.json');
    expect(parseArgs(['--only', 'network,publish']).out).toBe('bench/results/latest.json');
    expect(parseArgs(['--quick', '--only', 'network']).out).toBe('bench/results/quick.json');
    expect(() => parseArgs(['--fast'])).toThrow(/unknown argument/);
    expect(() => parseArgs(['--only'])).toThrow(/needs a value/);
    expect(() => parseArgs(['--skip', '--quick'])).toThrow(/needs a value/);
  });
});
