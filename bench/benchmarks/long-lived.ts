/**
 * 8. Long-lived service: heap after forced GC, before and after a run of calls of one record in
 * bursts of 50, every call given one shared shutdown signal; the baseline is the same run with no
 * signal. Node only here; `tsx scripts/soak.ts` runs it on Node 20/22/24, Bun and Deno.
 */
import { makeRow } from '../lib/row.js';
import { soakOn } from '../lib/soak.js';
import type { Benchmark } from './types.js';

export const longLived: Benchmark = {
  name: 'soak',
  title: '8 long-lived service',
  async run(ctx) {
    const calls = ctx.quick ? 10_000 : 100_000;
    const shared = await soakOn('node', { calls, signal: 'shared' });
    const none = await soakOn('node', { calls, signal: 'none' });
    ctx.log(`soak: ${calls} calls, growth ${shared.growthMB} MB with the signal, ${none.growthMB} MB without`);
    return [
      makeRow({
        benchmark: this.title,
        metric: `heap growth after ${calls.toLocaleString('en-US')} calls sharing one shutdown signal`,
        unit: 'MB',
        ours: shared.growthMB,
        baselineName: 'no signal',
        baseline: none.growthMB,
        ratio: Math.round((shared.growthMB - none.growthMB) * 100) / 100,
        ratioLabel: 'MB more',
        target: { of: 'value', op: '<=', limit: 3 },
        samples: { ours: [shared.growthMB], baseline: [none.growthMB] },
        note: `${shared.warnings.length} runtime warning(s); ${shared.runtime}`,
      }),
    ];
  },
};
