/** The one way tests make a client: pointed at an emulator, in-process or over loopback HTTP. */

import { type FetchLike, PushClient, type PushClientOptions } from 'push-api-client';
import type { EmulatorClientOptions } from 'push-api-client/testing';
import { TokenManager, type TokenManagerOptions } from '../../src/auth/token-manager.js';
import type { FetchHttpClient } from '../../src/http/http-client.js';

/**
 * What a client can be pointed at:
 * - an emulator (`createPushApiHandler`, `createPushApiMock`): answered in-process through its
 *   `fetch`, no sockets;
 * - a running emulator (`startEmulator`): real HTTP on 127.0.0.1;
 * - plain addresses and the demo credential (`mock.clientOptions()`, say): the global fetch, which
 *   msw intercepts, or the `fetch` given beside them.
 */
export type ClientTarget =
  | { clientOptions(): EmulatorClientOptions; fetch?: FetchLike }
  | (EmulatorClientOptions & { fetch?: FetchLike });

/** A PushClient for `target` (see ClientTarget) that reads no PUSH_* variable; `options` go on top. */
export function clientFor(target: ClientTarget, options: PushClientOptions = {}): PushClient {
  const { clientId, clientSecret, authUrl, baseUrl, scopeBase } =
    'clientOptions' in target ? target.clientOptions() : target;
  return new PushClient({
    clientId,
    clientSecret,
    authUrl,
    baseUrl,
    scopeBase,
    env: {},
    ...(target.fetch && { fetch: target.fetch }),
    ...options,
  });
}

/** A TokenManager asking an emulator for the demo credential's connector.write scope through `http`. */
export function emulatorTokenManager(
  http: FetchHttpClient,
  mock: Pick<EmulatorClientOptions, 'authUrl' | 'clientId' | 'clientSecret' | 'scopeBase'>,
  overrides: Partial<TokenManagerOptions> = {},
): TokenManager {
  return new TokenManager({
    http,
    authUrl: new URL(mock.authUrl),
    clientId: mock.clientId,
    clientSecret: mock.clientSecret,
    scopes: [`${mock.scopeBase}/connector.write`],
    ...overrides,
  });
}
