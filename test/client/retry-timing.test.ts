import { setupServer } from 'msw/node';
import {
  ConfigurationError,
  type PushClient,
  type PushClientOptions,
  RateLimitError,
  type RetryHookEvent,
} from 'push-api-client';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { SAMPLE_RECORD } from '../support/records.js';

const mock = createPushApiMock();
const server = setupServer(...mock.handlers);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => mock.reset());
afterAll(() => server.close());

const instant = { backoff: { initialDelayMs: 0, maxDelayMs: 0 }, maxRetryAfterMs: 0 } as const;

function client(options: PushClientOptions = {}): PushClient {
  return clientFor(mock.clientOptions(), options);
}

/** A 429 asking for five seconds, then a 503 without Retry-After, on the next two finance requests. */
function slowFaults(): void {
  mock.faults.add({ match: { operation: 'finance' }, status: 429, retryAfter: 5 });
  mock.faults.add({ match: { operation: 'finance' }, status: 503 });
}

const financeStatuses = () => mock.state.requests.filter((r) => r.operation === 'finance').map((r) => r.status);

async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await run();
  return { value, ms: performance.now() - started };
}

describe('retry timing options', () => {
  it('with backoff and maxRetryAfterMs at 0, publishBatch re-sends a 429 (Retry-After: 5) and a 503 at once', async () => {
    slowFaults();
    const { value, ms } = await timed(() => client(instant).finance.publishBatch(mock.appId, [SAMPLE_RECORD]));
    expect(value).toEqual({ success: true });
    expect(ms).toBeLessThan(1_000);
    expect(financeStatuses()).toEqual([429, 503, 200]);
    expect(mock.state.tokenRequestCount).toBe(1);
    expect(mock.state.recordCount(mock.appId)).toBe(1);
  });

  it('publish waits out its 429 patience and the 503 retry under the same options', async () => {
    slowFaults();
    const { value: report, ms } = await timed(() => client(instant).finance.publish(mock.appId, [SAMPLE_RECORD]));
    expect(report.recordsSent).toBe(1);
    expect(ms).toBeLessThan(1_000);
    expect(financeStatuses()).toEqual([429, 503, 200]);
    expect(mock.state.recordCount(mock.appId)).toBe(1);
  });

  it('the options given per call override the client for that call only', async () => {
    const slow = client();
    slowFaults();
    const fast = await timed(() => slow.finance.publishBatch(mock.appId, [SAMPLE_RECORD], instant));
    expect(fast.ms).toBeLessThan(1_000);
    expect(financeStatuses()).toEqual([429, 503, 200]);
    expect(slow.toJSON()).toMatchObject({
      backoff: { initialDelayMs: 500, maxDelayMs: 8_000 },
      maxRetryAfterMs: 60_000,
    });
  });

  it("publish's 429 patience follows the options given per call", async () => {
    slowFaults();
    const { value: report, ms } = await timed(() =>
      client().finance.publish(mock.appId, [SAMPLE_RECORD], { ...instant, onInvalid: 'throw' }),
    );
    expect(report.recordsSent).toBe(1);
    expect(ms).toBeLessThan(1_000);
    expect(financeStatuses()).toEqual([429, 503, 200]);
  });

  it('Retry-After is waited up to maxRetryAfterMs, and backoff sets the wait without one', async () => {
    const retries: RetryHookEvent[] = [];
    const paced = client({
      backoff: { initialDelayMs: 40, maxDelayMs: 40 },
      maxRetryAfterMs: 20,
      hooks: { retry: (event) => void retries.push(event) },
    });
    slowFaults();
    await paced.finance.publishBatch(mock.appId, [SAMPLE_RECORD]);
    expect(retries.map((r) => r.status)).toEqual([429, 503]);
    expect(retries[0]?.delayMs).toBe(20);
    // Jitter takes up to a quarter off the backoff.
    expect(retries[1]?.delayMs).toBeGreaterThanOrEqual(30);
    expect(retries[1]?.delayMs).toBeLessThanOrEqual(40);
  });

  it("publish's 429 patience deadline counts the capped wait, not the server's five seconds", async () => {
    mock.faults.add({ match: { operation: 'finance' }, status: 429, retryAfter: 5, times: 2 });
    const capped = client({ maxRetryAfterMs: 10 });
    const report = await capped.finance.publish(mock.appId, [SAMPLE_RECORD], { rateLimitDeadlineMs: 1_000 });
    expect(report.recordsSent).toBe(1);
    expect(financeStatuses()).toEqual([429, 429, 200]);
  });

  it('with waits of 0, a service that only answers 429 ends a batch after maxRetries waits', async () => {
    mock.faults.add({ match: { operation: 'finance' }, status: 429, retryAfter: 0, times: Infinity });
    const { value: report, ms } = await timed(() =>
      client({ ...instant, maxRetries: 2 }).finance.publish(mock.appId, [SAMPLE_RECORD]),
    );
    expect(ms).toBeLessThan(1_000);
    expect(report.recordsFailed).toBe(1);
    expect(report.batches[0]?.error).toBeInstanceOf(RateLimitError);
    expect(financeStatuses()).toEqual([429, 429, 429]);
  });

  it('token requests follow the options too', async () => {
    mock.faults.add({ match: { operation: 'token' }, status: 503, retryAfter: 5 });
    const { value: token, ms } = await timed(() => client(instant).tokens.getToken());
    expect(token.accessToken).not.toBe('');
    expect(ms).toBeLessThan(1_000);
    expect(mock.state.requests.filter((r) => r.operation === 'token').map((r) => r.status)).toEqual([503, 200]);
  });

  it('upload follows the per-call options for the address request and the signed PUT', async () => {
    mock.faults.add({ match: { operation: 'upload-urls' }, status: 503, retryAfter: 5 });
    mock.faults.add({ match: { operation: 'upload' }, status: 503, retryAfter: 5 });
    const { value: report, ms } = await timed(() =>
      client().uploads.upload(mock.appId, [{ name: 'users.csv', data: 'email\n' }], instant),
    );
    expect(report.filesUploaded).toBe(1);
    expect(ms).toBeLessThan(1_000);
    expect(mock.state.requests.filter((r) => r.operation !== 'token').map((r) => [r.operation, r.status])).toEqual([
      ['upload-urls', 503],
      ['upload-urls', 200],
      ['upload', 503],
      ['upload', 200],
    ]);
  });

  it('refuses invalid values with a ConfigurationError naming the option', async () => {
    const bad: [PushClientOptions, string][] = [
      [{ backoff: { initialDelayMs: -1 } }, 'backoff.initialDelayMs'],
      [{ backoff: { maxDelayMs: Number.NaN } }, 'backoff.maxDelayMs'],
      [{ backoff: 5 as unknown as PushClientOptions['backoff'] }, 'backoff'],
      [{ maxRetryAfterMs: 60_001 }, 'maxRetryAfterMs'],
      [{ maxRetryAfterMs: -5 }, 'maxRetryAfterMs'],
    ];
    for (const [options, name] of bad) {
      expect(() => client(options), name).toThrow(ConfigurationError);
      expect(() => client(options), name).toThrow(name);
      await expect(
        client().finance.publishBatch(mock.appId, [SAMPLE_RECORD], options as never),
        `per call: ${name}`,
      ).rejects.toThrow(name);
    }
    expect(mock.state.requests).toHaveLength(0);
  });
});
