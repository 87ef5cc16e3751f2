/**
 * A service that asks for tokens of scope sets its own users choose (`client.request` takes the
 * scopes per call) meets as many scope sets as it has users. What the token manager keeps per scope
 * set is bounded, as the MemoryTokenStore is: memory measured with the collector run by hand.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { FetchLike } from 'push-api-client';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { expect, it } from 'vitest';
import { FetchHttpClient } from '../../src/http/http-client.js';
import { emulatorTokenManager } from '../support/clients.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

async function heapAfterCollection(): Promise<number> {
  // Twice, with a turn between: undici frees a request's abort listener from a finalizer.
  gc();
  await new Promise((resolve) => setTimeout(resolve, 50));
  gc();
  return process.memoryUsage().heapUsed;
}

it('keeps no more per scope set than its bound, however many scope sets the calls ask for', async () => {
  const mock = createPushApiMock();
  // The token endpoint refuses every one of these scopes at once: only what the manager keeps is measured.
  const refuse: FetchLike = async () =>
    Response.json({ error: 'invalid_scope', error_description: 'not granted' }, { status: 400 });
  const http = new FetchHttpClient({
    fetch: refuse,
    timeoutMs: 2_000,
    maxRetries: 0,
    retryAmbiguous: false,
    allowInsecureHttp: false,
    userAgent: 'test',
    // A logger that keeps nothing: a recording one would hold a line per request.
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    backoff: { initialDelayMs: 0, maxDelayMs: 0 },
  });
  const tokens = emulatorTokenManager(http, mock);
  const ask = async (from: number, count: number) => {
    for (let i = from; i < from + count; i++) {
      await tokens.getToken({ scopes: [`${mock.scopeBase}/tenant-${i}.read`] }).catch(() => undefined);
    }
  };
  await ask(0, 2_000);
  const before = await heapAfterCollection();
  await ask(2_000, 20_000);
  const grown = (await heapAfterCollection()) - before;
  // Before the bound, about 220 bytes each were kept for good: 20,000 scope sets held 4.4 MB.
  expect(grown).toBeLessThan(1.5 * 1024 * 1024);
}, 60_000);
