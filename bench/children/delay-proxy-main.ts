/**
 * The delay proxy in its own process, so that forwarding bytes never takes CPU time from the
 * measured code's event loop (nor the measured code from the proxy's timers). Started by
 * `bench/lib/proxy-process.ts` with fork(); the config arrives as argv[2] (JSON). It exits when
 * the harness closes it or goes away.
 */
import { startDelayProxy } from '../net/delay-proxy.js';
import type { FromProxy, ProxyChildConfig, ToProxy } from '../net/protocol.js';

function reply(message: FromProxy): void {
  process.send?.(message);
}

const config = JSON.parse(process.argv[2] ?? '{}') as ProxyChildConfig;
const proxy = await startDelayProxy({ ...config, bytesPerSecond: config.bytesPerSecond ?? Number.POSITIVE_INFINITY });
process.on('message', (message: ToProxy) => {
  if (message.type === 'stats') reply({ type: 'stats', stats: proxy.stats() });
  else if (message.type === 'reset') {
    proxy.reset();
    reply({ type: 'reset-done' });
  } else if (message.type === 'close') void proxy.close().then(() => process.exit(0));
});
process.on('disconnect', () => void proxy.close().then(() => process.exit(0)));
reply({ type: 'ready', url: proxy.url, port: proxy.port });
