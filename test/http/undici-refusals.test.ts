/**
 * A request undici refuses to start (a header it will not send): nothing was written, so it is a
 * ConfigurationError, never a ConnectionError that "may have sent" it and is retried.
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/errors.js';
import { FetchHttpClient } from '../../src/http/http-client.js';
import type { RequestSpec } from '../../src/http/types.js';
import { useLoopbackServers } from '../support/loopback-server.js';

const serve = useLoopbackServers();
const silent = { debug() {}, info() {}, warn() {}, error() {} };

describe('a request undici refuses before writing it', () => {
  it.each([
    ['transfer-encoding', 'chunked'],
    ['upgrade', 'websocket'],
    ['expect', '100-continue'],
  ])('%s: ConfigurationError, not retried, the server gets nothing', async (name, value) => {
    let received = 0;
    const url = await serve((_req, res) => {
      received++;
      res.end('ok');
    });
    const http = new FetchHttpClient({
      timeoutMs: 2_000,
      maxRetries: 3,
      retryAmbiguous: true,
      allowInsecureHttp: false,
      userAgent: 'test',
      logger: silent,
      backoff: { initialDelayMs: 0, maxDelayMs: 0 },
    });
    const spec: RequestSpec = {
      operation: 'test',
      method: 'POST',
      url: new URL(`${url}/x`),
      headers: { [name]: value },
      body: () => 'body',
      auth: 'none',
      retryPolicy: 'non-idempotent',
    };
    const result = await http.exchange(spec);
    expect(result.ok).toBe(false);
    const error = result.ok ? undefined : result.error;
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error?.message).toMatch(/could not be sent: undici refused it/);
    expect(received).toBe(0);
  });
});
