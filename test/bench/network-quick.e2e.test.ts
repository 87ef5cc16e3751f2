/**
 * The network rows in quick mode, as CI runs them (`npm run bench -- --quick`): the proxy, the
 * sink with its server time, the SDK and the scripts all run, and every row comes out well formed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { network } from '../../bench/benchmarks/network.js';
import { buildChildren } from '../../bench/lib/build-children.js';
import { ensureBuiltPackage } from '../../bench/lib/ensure-dist.js';
import { TempFiles } from '../../bench/lib/temp-files.js';

describe('a quick run of the network rows', () => {
  const temp = new TempFiles();
  beforeAll(async () => {
    await buildChildren();
    await ensureBuiltPackage(() => {});
  }, 300_000);
  afterAll(() => temp.removeAll());

  it('measures the SDK beside every fixed-concurrency script, with its window', async () => {
    const rows = await network.run({ quick: true, temp, log: () => {} });
    const headlines = rows.filter((row) => row.target !== undefined);
    expect(headlines.map((row) => row.metric.split(':')[0])).toEqual([
      'publish 20,000 records',
      'upload 20 × 1 MiB',
      'upload 1 × 16 MiB',
      'cold process, token + 5,000 records',
    ]);
    for (const row of headlines) {
      expect(row.baselineName).toMatch(/\(best\)$/);
      expect(Number.isFinite(row.ours) && Number.isFinite(row.baseline) && Number.isFinite(row.ratio)).toBe(true);
      expect(typeof row.pass).toBe('boolean');
      expect(row.note).toContain('RTT 50 ms');
    }
    // Each script at 4, 8, 16 and 32 in flight has its own line where concurrency matters.
    expect(rows.filter((row) => row.metric.startsWith('publish 20,000 records: SDK vs fetch ×'))).toHaveLength(4);
    const trace = headlines[0]?.trace;
    expect(trace?.operation).toBe('finance');
    expect(Math.max(...(trace?.inFlight ?? []).map(([, n]) => n))).toBeGreaterThan(0);
    // A 50 ms round trip through the proxy: never shorter (the delay is applied), and not a
    // multiple of it (the proxy does not queue or delay twice); a busy machine's timers add some.
    const ping = rows.find((row) => row.metric.startsWith('delay proxy: round trip'));
    expect(ping?.ours).toBeGreaterThan(45);
    expect(ping?.ours).toBeLessThan(100);
  }, 180_000);
});
