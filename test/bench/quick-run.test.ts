import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenSingleFlight } from '../../bench/benchmarks/token-single-flight.js';
import { buildChildren } from '../../bench/lib/build-children.js';
import { TempFiles } from '../../bench/lib/temp-files.js';

describe('a quick run of one benchmark', () => {
  const temp = new TempFiles();
  beforeAll(() => buildChildren());
  afterAll(() => temp.removeAll());

  it('produces well-formed rows, the single-flight assertion included', async () => {
    const rows = await tokenSingleFlight.run({ quick: true, temp, log: () => {} });
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.benchmark).toBe('5 token single-flight');
      expect(row.metric).not.toBe('');
      expect(Number.isFinite(row.ours)).toBe(true);
      expect(row.samples.ours.length).toBeGreaterThan(0);
      if (row.target) expect(typeof row.pass).toBe('boolean');
    }
    const singleFlight = rows.find((row) => row.metric.startsWith('token requests'));
    expect(singleFlight).toMatchObject({ ours: 1, pass: true });
  });
});
