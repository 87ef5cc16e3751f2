/**
 * 5. Token single-flight: 10,000 concurrent getToken() calls make exactly one token request; and
 * the cost of a cached getToken() against a plain Map lookup plus an expiry check.
 */
import { alternate } from '../lib/alternate.js';
import { clientFor } from '../lib/client.js';
import { makeRow } from '../lib/row.js';
import { withServer } from '../lib/server-process.js';
import { median, ratio } from '../lib/stats.js';
import type { Benchmark } from './types.js';

const CONCURRENT_CALLS = 10_000;

interface Cached {
  token: { accessToken: string; expiresAt: Date };
  refreshAt: number;
}

/** The least a cache can do: one Map lookup and one clock comparison, awaited like getToken. */
function plainCache(): () => Promise<Cached['token']> {
  const cache = new Map<string, Cached>([
    [
      'scope',
      { token: { accessToken: 'x', expiresAt: new Date(Date.now() + 3_600_000) }, refreshAt: Date.now() + 3_000_000 },
    ],
  ]);
  return async () => {
    const entry = cache.get('scope');
    if (entry && Date.now() < entry.refreshAt) return entry.token;
    throw new Error('expired');
  };
}

async function nsPerCall(calls: number, call: () => Promise<unknown>): Promise<number> {
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) await call();
  return Number(process.hrtime.bigint() - started) / calls;
}

export const tokenSingleFlight: Benchmark = {
  name: 'token',
  title: '5 token single-flight',
  async run(ctx) {
    const calls = ctx.quick ? 50_000 : 500_000;
    const rounds = ctx.quick ? 1 : 7;
    return withServer({ kind: 'sink' }, async (server) => {
      const client = clientFor(server);
      const before = (await server.stats()).tokenRequests;
      const tokens = await Promise.all(Array.from({ length: CONCURRENT_CALLS }, () => client.tokens.getToken()));
      const requests = (await server.stats()).tokenRequests - before;
      const distinct = new Set(tokens.map((token) => token.accessToken)).size;
      ctx.log(
        `token: ${CONCURRENT_CALLS} concurrent calls made ${requests} token request(s); ${rounds} rounds of ${calls} cached calls`,
      );

      const lookup = plainCache();
      await nsPerCall(calls / 10, () => client.tokens.getToken());
      await nsPerCall(calls / 10, lookup);
      const samples = await alternate(rounds, [
        { name: 'sdk', run: () => nsPerCall(calls, () => client.tokens.getToken()) },
        { name: 'map', run: () => nsPerCall(calls, lookup) },
      ]);
      const ours = samples.get('sdk') ?? [];
      const baseline = samples.get('map') ?? [];
      return [
        makeRow({
          benchmark: this.title,
          metric: `token requests for ${CONCURRENT_CALLS.toLocaleString('en-US')} concurrent getToken()`,
          unit: '',
          ours: requests,
          target: { of: 'value', op: '==', limit: 1 },
          samples: { ours: [requests] },
          note: `${distinct} distinct token(s) handed out`,
        }),
        makeRow({
          benchmark: this.title,
          metric: 'cached getToken() cost per call',
          unit: 'ns',
          ours: median(ours),
          baselineName: 'Map+Date.now',
          baseline: median(baseline),
          ratio: ratio(median(ours), median(baseline)),
          samples: { ours, baseline },
          note: `${calls.toLocaleString('en-US')} awaited calls per round`,
        }),
      ];
    });
  },
};
