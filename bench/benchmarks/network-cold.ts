/**
 * Network row: a cold process asks for a token and publishes 5,000 records through the delay
 * proxy, then exits, as a cron job far from the service would. Each sample is a whole process,
 * from spawn to exit: the built package with every option at its default, against the
 * `JSON.stringify` + `fetch` script of the one-shot rows at fixed concurrency 4, 8, 16 and 32.
 */
import { alternate } from '../lib/alternate.js';
import { connectionEnv } from '../lib/client.js';
import type { FarServer } from '../lib/far-server.js';
import { runChildOk } from '../lib/measured-child.js';
import { oneShotArgv } from '../lib/one-shot-args.js';
import { childScript } from '../lib/paths.js';
import type { Row } from '../lib/row.js';
import { median } from '../lib/stats.js';
import { versusBest } from '../lib/versus-best.js';
import { SCRIPT_CONCURRENCIES } from './network-publish.js';
import type { BenchContext } from './types.js';

const COUNT = 5_000;

interface Output {
  sent: number;
  tokenLeavesMs?: number;
  peakInFlight?: number;
  limitEvents?: number;
}

export async function networkColdRows(ctx: BenchContext, far: FarServer, benchmark: string): Promise<Row[]> {
  const rounds = ctx.quick ? 1 : 5;
  const env = connectionEnv(far.server);
  const outputs: Output[] = [];
  const process_ = async (what: string, args: string[]): Promise<number> => {
    await far.fresh();
    const run = await runChildOk({ command: process.execPath, args, env });
    const output = JSON.parse(run.stdout) as Output;
    if (output.sent !== COUNT) throw new Error(`${what}: sent ${output.sent} of ${COUNT}`);
    if (what === 'SDK') outputs.push(output);
    return run.wallMs;
  };
  const scriptArgs = (concurrency: number) => [
    childScript('publish-once-fetch'),
    ...oneShotArgv({ count: COUNT, input: 'array', optional: 'quarter', concurrency }),
  ];
  ctx.log(`network cold process: ${rounds} rounds of token + ${COUNT} records, SDK and 4 scripts`);
  const samples = await alternate(rounds, [
    { name: 'sdk', run: () => process_('SDK', [childScript('cold-publish-sdk'), String(COUNT)]) },
    ...SCRIPT_CONCURRENCIES.map((c) => ({ name: `fetch ×${c}`, run: () => process_(`fetch ×${c}`, scriptArgs(c)) })),
  ]);
  const tokenLeaves = median(outputs.map((output) => output.tokenLeavesMs ?? Number.NaN));
  const peaks = outputs.map((output) => output.peakInFlight ?? 0);
  return versusBest({
    benchmark,
    work: `cold process, token + ${COUNT.toLocaleString('en-US')} records`,
    unit: 'ms',
    higherIsBetter: false,
    sdk: samples.get('sdk') ?? [],
    scripts: new Map(SCRIPT_CONCURRENCIES.map((c) => [`fetch ×${c}`, samples.get(`fetch ×${c}`) ?? []])),
    target: { of: 'ratio', op: '<=', limit: 1.1 },
    note:
      `whole process, spawn to exit; the SDK's token request leaves ${tokenLeaves.toFixed(0)} ms after the call ` +
      `(median); SDK peak in flight ${Math.min(...peaks)}–${Math.max(...peaks)}`,
  });
}
