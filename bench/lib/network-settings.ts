/**
 * The emulated network of the network rows, and how to change it: 25 ms each way (a 50 ms round
 * trip), 50 MB/s per connection and direction, one round trip per new connection, and a finance
 * service that takes 20 ms + 0.02 ms per record to answer a batch. Each can be set from the
 * environment, e.g. `BENCH_NET_ONE_WAY_MS=50 npm run bench -- --only network`.
 */
import type { ProxyChildConfig } from '../net/protocol.js';
import type { ServerTime } from '../sink/protocol.js';

export interface NetworkSettings {
  proxy: Omit<ProxyChildConfig, 'targetPort'>;
  serverTime: ServerTime;
}

/** Above this, Node's timers would overflow and fire at once: no setting may ask for it. */
const MAX_SETTING = 60_000;

function fromEnv(name: string, fallback: number, env: Record<string, string | undefined>): number {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0 || value > MAX_SETTING) {
    throw new Error(`${name} must be a number from 0 to ${MAX_SETTING}, got ${JSON.stringify(text)}`);
  }
  return value;
}

export function networkSettings(env: Record<string, string | undefined> = process.env): NetworkSettings {
  const mbps = fromEnv('BENCH_NET_MBPS', 50, env);
  return {
    proxy: {
      oneWayDelayMs: fromEnv('BENCH_NET_ONE_WAY_MS', 25, env),
      // 0 means no cap.
      bytesPerSecond: mbps === 0 ? null : mbps * 1e6,
      handshakeRoundTrips: fromEnv('BENCH_NET_HANDSHAKE_RTTS', 1, env),
    },
    serverTime: {
      baseMs: fromEnv('BENCH_NET_SERVER_MS', 20, env),
      perRecordMs: fromEnv('BENCH_NET_SERVER_MS_PER_RECORD', 0.02, env),
    },
  };
}

/** `RTT 50 ms, 50 MB/s per connection, server 20 ms + 0.02 ms/record`, for the rows' notes. */
export function describeNetwork(settings: NetworkSettings): string {
  const { proxy, serverTime } = settings;
  const cap = proxy.bytesPerSecond === null ? 'no bandwidth cap' : `${proxy.bytesPerSecond / 1e6} MB/s per connection`;
  return `RTT ${2 * proxy.oneWayDelayMs} ms, ${cap}, server ${serverTime.baseMs} ms + ${serverTime.perRecordMs} ms/record per batch`;
}
