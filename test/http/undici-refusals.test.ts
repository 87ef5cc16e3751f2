/**
 * A request undici refuses to start (a header it will not send): nothing was written, so it is a
 * ConfigurationError, never a ConnectionError that "may have sent" it and is retried.
 */
import { PublishStoppedError } from 'push-api-client';
import { DEMO_APP_ID, startEmulator } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/errors.js';
import { FetchHttpClient } from '../../src/http/http-client.js';
import type { RequestSpec } from '../../src/http/types.js';
import { clientFor } from '../support/clients.js';
import { useLoopbackServers } from '../support/loopback-server.js';
import { financeRecords } from '../support/records.js';

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

describe('a port fetch never connects to (the Fetch standard bad ports)', () => {
  it('a finance batch to port 6666 is failed, not unknown: a ConfigurationError naming the port, the run stopped', async () => {
    const emulator = await startEmulator({ port: 0 });
    try {
      const client = clientFor(emulator, {
        baseUrl: 'http://127.0.0.1:6666',
        maxRetries: 3,
        backoff: { initialDelayMs: 1, maxDelayMs: 1 },
      });
      const error = await client.finance
        .publish(DEMO_APP_ID, financeRecords(2), { batchSize: 1, concurrency: 1 })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(PublishStoppedError);
      const { cause, report } = error as PublishStoppedError;
      expect(cause).toBeInstanceOf(ConfigurationError);
      expect((cause as Error).message).toBe(
        'finance request could not be sent: its port is one fetch never connects to (a "bad port": the Fetch standard blocks ports such as 1, 6000, 6665-6669 and 10080); use another port',
      );
      expect(report).toMatchObject({ recordsFailed: 1, recordsUnknown: 0, recordsNotRead: 1 });
    } finally {
      await emulator.close();
    }
  });
});
