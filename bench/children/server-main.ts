/**
 * A server child: the minimal sink or the emulator, in its own process so that its CPU and memory
 * are never counted as the measured code's. Started by `bench/lib/server-process.ts` with fork();
 * the config arrives as argv[2] (JSON). It exits when the harness closes it or goes away.
 */
import { startEmulator } from '../../src/testing/server.js';
import { emptyStats, type FromChild, type ServerChildConfig, type SinkStats, type ToChild } from '../sink/protocol.js';
import { startSink } from '../sink/sink-server.js';

interface Served {
  ready: Omit<Extract<FromChild, { type: 'ready' }>, 'type'>;
  stats(): SinkStats;
  reset(): void;
  close(): Promise<void>;
}

const BENCH_CREDENTIALS = { clientId: 'bench-client', clientSecret: 'bench-secret', scopeBase: 'https://bench.local' };

async function serveSink(config: ServerChildConfig): Promise<Served> {
  const sink = await startSink({ countRecords: config.countRecords === true, serverTime: config.serverTime });
  return {
    ready: { url: sink.url, appId: 'bench-app', ...BENCH_CREDENTIALS },
    stats: () => sink.stats,
    reset: () => sink.reset(),
    close: () => sink.close(),
  };
}

async function serveEmulator(config: ServerChildConfig): Promise<Served> {
  // Only counts are kept: the benchmark is about the client, not the emulator's memory.
  const emulator = await startEmulator({ rateLimit: config.rateLimit, keepRecords: false });
  const { mock } = emulator;
  return {
    ready: {
      url: emulator.url,
      appId: mock.appId,
      clientId: mock.clientId,
      clientSecret: mock.clientSecret,
      scopeBase: mock.scopeBase,
    },
    stats() {
      const stats = emptyStats();
      const finance = mock.state.requests.filter((entry) => entry.operation === 'finance');
      const settledFrom = (finance[0]?.at ?? 0) + 2 * (config.rateLimit?.windowMs ?? 0);
      for (const entry of finance) {
        const refused = entry.status === 429;
        stats.financeRequests++;
        if (refused) stats.financeRateLimited++;
        if (entry.at < settledFrom) continue;
        stats.financeRequestsSettled++;
        if (refused) stats.financeRateLimitedSettled++;
      }
      stats.tokenRequests = mock.state.tokenRequestCount;
      stats.financeRecords = mock.state.recordCount(mock.appId);
      return stats;
    },
    reset: () => mock.reset(),
    close: () => emulator.close(),
  };
}

function reply(message: FromChild): void {
  process.send?.(message);
}

const config = JSON.parse(process.argv[2] ?? '{}') as ServerChildConfig;
const served = config.kind === 'emulator' ? await serveEmulator(config) : await serveSink(config);
process.on('message', (message: ToChild) => {
  if (message.type === 'stats') reply({ type: 'stats', stats: served.stats() });
  else if (message.type === 'reset') {
    served.reset();
    reply({ type: 'reset-done' });
  } else if (message.type === 'close') void served.close().then(() => process.exit(0));
});
process.on('disconnect', () => void served.close().then(() => process.exit(0)));
reply({ type: 'ready', ...served.ready });
