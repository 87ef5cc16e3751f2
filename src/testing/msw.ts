/**
 * `push-api-client/testing/msw`: the emulator as msw request handlers for
 * `setupServer(...mock.handlers)`. The only module of the testing kit that imports msw (an optional
 * peer dependency), so `push-api-client/testing` loads and type-checks without it.
 *
 * It imports the emulator by the package's own name, so that the published subpath shares the one
 * copy of `push-api-client/testing` (its classes, its defaults) instead of bundling a second one.
 */
import { HttpResponse, http, type RequestHandler } from 'msw';
import { createPushApiHandler, type EmulatorOptions, type PushApiEmulator } from 'push-api-client/testing';

/** An emulated push service served through msw: the emulator plus the handlers to give `setupServer`. */
export interface PushApiMock extends PushApiEmulator {
  /** msw handlers for the token, data and storage hosts. */
  readonly handlers: RequestHandler[];
}

/**
 * Creates an emulated push service for msw, so that code using `PushClient` can be tested without
 * the real service or a socket. It intercepts the default `{auth_url}`, `{base_url}` and storage
 * hosts (`*.push.test`), which never resolve, so a test cannot reach a real service by mistake.
 * Call `mock.reset()` between tests to forget state, faults and clock changes.
 *
 * @example
 * ```ts
 * import { setupServer } from 'msw/node';
 * import { PushClient } from 'push-api-client';
 * import { createPushApiMock } from 'push-api-client/testing/msw';
 *
 * const mock = createPushApiMock();
 * const server = setupServer(...mock.handlers);
 * server.listen({ onUnhandledRequest: 'error' });
 *
 * const client = new PushClient({
 *   clientId: mock.clientId,
 *   clientSecret: mock.clientSecret,
 *   authUrl: mock.authUrl,
 *   baseUrl: mock.baseUrl,
 *   scopeBase: mock.scopeBase,
 * });
 * await client.uploads.upload(mock.appId, [{ name: 'users.csv', data: 'email\nada@example.com\n' }]);
 * console.log(mock.state.file(mock.appId, 'users.csv')?.size); // 22
 * server.close();
 * ```
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
