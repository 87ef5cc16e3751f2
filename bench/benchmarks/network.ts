/**
 * 10. Over a real network: the SDK with its defaults against hand-written scripts at fixed
 * concurrency, through a delay proxy of our own (bench/net/) in front of the sink, which takes a
 * server time per finance batch. The proxy's own cost, measured on a loopback echo, comes first.
 * `npm run bench -- --only network` writes bench/results/network.json, which docs/performance.md
 * and bench/results/concurrency-window.svg are generated from (bench/network-doc.ts).
 */
import { withFarServer } from '../lib/far-server.js';
import { describeNetwork, networkSettings } from '../lib/network-settings.js';
import { proxyCheckRows } from '../lib/proxy-check.js';
import { networkColdRows } from './network-cold.js';
import { networkPublishRows } from './network-publish.js';
import { networkUploadRows } from './network-upload.js';
import type { Benchmark } from './types.js';

const TITLE = '10 over a network';

export const network: Benchmark = {
  name: 'network',
  title: TITLE,
  async run(ctx) {
    const settings = networkSettings();
    ctx.log(`network: ${describeNetwork(settings)}`);
    const check = await proxyCheckRows(TITLE, settings.proxy, ctx.quick);
    const rows = await withFarServer(settings, async (far) => [
      ...(await networkPublishRows(ctx, far, TITLE)),
      ...(await networkUploadRows(ctx, far, TITLE)),
      ...(await networkColdRows(ctx, far, TITLE)),
    ]);
    const network = describeNetwork(settings);
    return [...check, ...rows.map((row) => (row.target ? { ...row, note: `${network}; ${row.note ?? ''}` } : row))];
  },
};
