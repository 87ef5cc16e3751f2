/**
 * msw adapter: the emulator as request handlers for `setupServer(...mock.handlers)`.
 * The only module of the testing kit that imports msw (an optional peer dependency).
 */
import { HttpResponse, http, type RequestHandler } from 'msw';
import { createPushApiHandler, type PushApiEmulator } from './handler.js';
import type { EmulatorOptions } from './options.js';

export interface PushApiMock extends PushApiEmulator {
  /** msw handlers for the token, data and storage hosts. */
  readonly handlers: RequestHandler[];
}

/**
 * Creates an emulated push service for msw.
 *
 * @example
 * const mock = createPushApiMock();
 * const server = setupServer(...mock.handlers);
 * server.listen({ onUnhandledRequest: 'error' });
 */
export function createPushApiMock(options: EmulatorOptions = {}): PushApiMock {
  const emulator = createPushApiHandler(options);
  const prefixes = [...new Set([emulator.authUrl, emulator.baseUrl, emulator.uploadUrl])];
  const resolver = async ({ request }: { request: Request }) => {
    const response = await emulator.handle(request);
    return response.type === 'error' ? HttpResponse.error() : response;
  };
  const handlers = prefixes.flatMap((prefix) => [http.all(prefix, resolver), http.all(`${prefix}/*`, resolver)]);
  return Object.assign(emulator, { handlers });
}
