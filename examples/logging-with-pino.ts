/**
 * Recipe: the SDK's logs through pino.
 *
 * PushClient accepts any logger with `debug`, `info`, `warn` and `error`; it recognises pino and
 * passes the fields first, as pino expects. At `debug` there is one line per request attempt
 * (operation, method, path, status, attempt, duration); retries log at `warn`, a refused token at
 * `info`. Lines never hold the client secret, tokens, headers or the query of signed addresses.
 *
 *   npx tsx examples/logging-with-pino.ts
 *   LOG_LEVEL=warn npx tsx examples/logging-with-pino.ts    # only retries and problems
 */
import { pathToFileURL } from 'node:url';
import { type DestinationStream, type Logger, pino } from 'pino';
import { PushClient, type PushClientOptions } from 'push-api-client';
import { startEmulator } from 'push-api-client/testing';

/** A pino logger for the SDK, as a child so that its lines are easy to filter. */
export function createSdkLogger(destination?: DestinationStream, level = process.env.LOG_LEVEL ?? 'debug'): Logger {
  const root = destination ? pino({ level }, destination) : pino({ level });
  return root.child({ component: 'push-api-client' });
}

export function createLoggedClient(options: PushClientOptions, logger: Logger): PushClient {
  return new PushClient({ ...options, logger });
}

export async function main(destination?: DestinationStream): Promise<void> {
  const emulator = await startEmulator();
  try {
    const client = createLoggedClient(
      {
        clientId: emulator.mock.clientId,
        clientSecret: emulator.mock.clientSecret,
        authUrl: emulator.authUrl,
        baseUrl: emulator.baseUrl,
        scopeBase: emulator.mock.scopeBase,
      },
      createSdkLogger(destination),
    );
    // One rate-limited answer, to show the retry line.
    emulator.mock.faults.add({ match: { operation: 'finance' }, status: 429, retryAfter: 0 });
    await client.uploads.upload(emulator.mock.appId, [{ name: 'users.csv', data: 'email\nada@example.com\n' }]);
    await client.finance.publish(emulator.mock.appId, [
      {
        created: '2025-01-31',
        amount: 42,
        currency: 'USD',
        identifier: 'ada@example.com',
        type: 'expense',
        vendor: 'Acme',
      },
    ]);
  } finally {
    await emulator.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
