/**
 * The sink behind the delay proxy, each in its own process: a server child whose every address
 * (token, data API, storage) is reached through the proxy, as if it were across the internet.
 */
import type { ProxyStats } from '../net/delay-proxy.js';
import type { ServerTime } from '../sink/protocol.js';
import type { NetworkSettings } from './network-settings.js';
import { type ProxyProcess, startProxyProcess } from './proxy-process.js';
import { type ServerProcess, withServer } from './server-process.js';

export interface FarServer {
  /** The sink, with `url` the proxy's: `clientFor` and `connectionEnv` lead through the proxy. */
  server: ServerProcess;
  proxy: ProxyProcess;
  /** Closes the connections of the last run and zeroes the counters of both. */
  fresh(): Promise<void>;
  /** What the last run did on the wire. */
  counts(): Promise<{ proxy: ProxyStats; sink: Awaited<ReturnType<ServerProcess['stats']>> }>;
}

export async function withFarServer<T>(settings: NetworkSettings, use: (far: FarServer) => Promise<T>): Promise<T> {
  const serverTime: ServerTime = settings.serverTime;
  return withServer({ kind: 'sink', serverTime }, async (sink) => {
    const proxy = await startProxyProcess({ ...settings.proxy, targetPort: Number(new URL(sink.url).port) });
    try {
      const server: ServerProcess = { ...sink, url: proxy.url };
      return await use({
        server,
        proxy,
        async fresh() {
          await proxy.reset();
          await sink.reset();
          // Lets the client see its pooled connections close before the next run picks one.
          await new Promise((resolve) => setTimeout(resolve, 20));
        },
        async counts() {
          return { proxy: await proxy.stats(), sink: await sink.stats() };
        },
      });
    } finally {
      await proxy.close();
    }
  });
}
