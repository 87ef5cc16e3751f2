/**
 * The emulator behind the delay proxy (bench/net/delay-proxy.ts): every address it hands out (the
 * token endpoint, the data API, the signed upload addresses) is the proxy's, so each request
 * crosses a path with a round trip, a handshake and, when a test chooses, a connection that resets
 * or stalls. Closed after each test.
 */

import { type RunningEmulator, type StartEmulatorOptions, startEmulator } from 'push-api-client/testing';
import { afterEach } from 'vitest';
import { type DelayProxyOptions, type RunningProxy, startDelayProxy } from '../../bench/net/delay-proxy.js';

export interface FarEmulator {
  emulator: RunningEmulator;
  proxy: RunningProxy;
}

export type FarEmulatorOptions = Omit<DelayProxyOptions, 'targetPort'> & { emulator?: StartEmulatorOptions };

/** Registers the afterEach that closes them, and returns `start(options)`. */
export function useFarEmulator(): (options?: FarEmulatorOptions) => Promise<FarEmulator> {
  const running: FarEmulator[] = [];
  afterEach(async () => {
    for (const { emulator, proxy } of running.splice(0)) {
      await proxy.close();
      await emulator.close();
    }
  });
  return async ({ emulator: emulatorOptions, ...proxyOptions } = {}) => {
    let targetPort = 0;
    // The proxy listens first: the emulator must know its address to hand it out.
    const proxy = await startDelayProxy({ ...proxyOptions, targetPort: () => targetPort });
    const emulator = await startEmulator({ ...emulatorOptions, publicUrl: proxy.url });
    targetPort = Number(new URL(emulator.listenUrl).port);
    running.push({ emulator, proxy });
    return { emulator, proxy };
  };
}
