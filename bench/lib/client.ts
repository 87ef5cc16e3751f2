/** A PushClient wired to a server child (sink or emulator) over loopback. */
import { PushClient, type PushClientOptions } from '../../src/client.js';
import type { ServerProcess } from './server-process.js';

export function clientFor(server: ServerProcess, options: Partial<PushClientOptions> = {}): PushClient {
  return new PushClient({ ...connectionOptions(server), ...options });
}

/** The options that lead a client to the server, nothing read from the environment: for any build's PushClient. */
export function connectionOptions(server: ServerProcess) {
  return {
    clientId: server.clientId,
    clientSecret: server.clientSecret,
    authUrl: authUrlOf(server),
    baseUrl: server.url,
    scopeBase: server.scopeBase,
    env: {},
  };
}

/** The emulator serves its token endpoint under `/auth`; the sink answers it on any path. */
export function authUrlOf(server: ServerProcess): string {
  return `${server.url}/auth`;
}

/** Environment for the CLI and the child scripts, pointing them at the server. */
export function connectionEnv(server: ServerProcess): Record<string, string> {
  return {
    PUSH_CLIENT_ID: server.clientId,
    PUSH_CLIENT_SECRET: server.clientSecret,
    PUSH_AUTH_URL: authUrlOf(server),
    PUSH_BASE_URL: server.url,
    PUSH_SCOPE_BASE: server.scopeBase,
    BENCH_APP_ID: server.appId,
  };
}
