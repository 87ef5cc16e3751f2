/** Clients wired to the emulator, shared by the test suites. */
import { TokenManager, type TokenManagerOptions } from '../../src/auth/token-manager.js';
import type { FetchHttpClient } from '../../src/http/http-client.js';
import { PushClient, type PushClientOptions } from '../../src/index.js';

export { capturingFetch, type LogLine, recordingLogger, type SeenRequest } from '../http/support.js';

/** What a client needs to know of an emulator: its addresses and its demo credential. */
export interface EmulatorAddresses {
  authUrl: string;
  baseUrl: string;
  scopeBase: string;
  clientId: string;
  clientSecret: string;
}

/** A PushClient pointed at an emulator's addresses; `options` (fetch included) go on top. */
export function pushClientFor(emulator: EmulatorAddresses, options: PushClientOptions = {}): PushClient {
  return new PushClient({
    clientId: emulator.clientId,
    clientSecret: emulator.clientSecret,
    authUrl: emulator.authUrl,
    baseUrl: emulator.baseUrl,
    scopeBase: emulator.scopeBase,
    env: {},
    ...options,
  });
}

/** A PushClient wired to an in-process emulator through its fetch (no sockets) unless `options.fetch` says otherwise. */
export function emulatorClient(
  mock: EmulatorAddresses & { fetch: NonNullable<PushClientOptions['fetch']> },
  options: PushClientOptions = {},
): PushClient {
  return pushClientFor(mock, { fetch: mock.fetch, ...options });
}

/** A PushClient talking real HTTP to a running emulator on 127.0.0.1. */
export function serverClient(
  server: { authUrl: string; baseUrl: string; mock: { clientId: string; clientSecret: string; scopeBase: string } },
  options: PushClientOptions = {},
): PushClient {
  return pushClientFor(
    {
      clientId: server.mock.clientId,
      clientSecret: server.mock.clientSecret,
      authUrl: server.authUrl,
      baseUrl: server.baseUrl,
      scopeBase: server.mock.scopeBase,
    },
    options,
  );
}

/** A TokenManager asking an emulator for the demo credential's connector.write scope through `http`. */
export function emulatorTokenManager(
  http: FetchHttpClient,
  mock: Pick<EmulatorAddresses, 'authUrl' | 'clientId' | 'clientSecret' | 'scopeBase'>,
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
