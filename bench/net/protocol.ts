/** Messages between the harness and the delay proxy child, over the fork IPC channel. */
import type { ProxyStats } from './delay-proxy.js';

/** The proxy's settings, all given: JSON has no Infinity, so `bytesPerSecond: null` means no cap. */
export interface ProxyChildConfig {
  targetPort: number;
  oneWayDelayMs: number;
  bytesPerSecond: number | null;
  handshakeRoundTrips: number;
}

export type ToProxy = { type: 'stats' } | { type: 'reset' } | { type: 'close' };

export type FromProxy =
  | { type: 'ready'; url: string; port: number }
  | { type: 'stats'; stats: ProxyStats }
  | { type: 'reset-done' };
