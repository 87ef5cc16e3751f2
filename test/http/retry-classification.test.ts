import {
  AbortError,
  BadRequestError,
  ConfigurationError,
  ConnectionError,
  PushApiError,
  RedirectError,
  TimeoutError,
  TokenError,
} from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { classifyFailure, DEFAULT_BACKOFF, nextStep } from '../../src/http/retry.js';
import type { RetryPolicy } from '../../src/http/types.js';

/** Whether the transport's one rule list re-sends a first failure, with retries left and no pacing. */
function shouldRetry(error: unknown, policy: RetryPolicy, retryAmbiguous: boolean): boolean {
  const state = {
    policy,
    retryAmbiguous,
    retriesLeft: 1,
    waits: 0,
    tokenFailure: false,
    recover: [],
    recovered: new Set(),
    pacing: undefined,
    backoff: DEFAULT_BACKOFF,
    maxRetries: 1,
    maxRetryAfterMs: 60_000,
  } as const;
  return nextStep(error, { ...state, recovered: new Set() }).kind === 'wait';
}

const api = (status: number) => PushApiError.fromResponse(status, undefined, {});
const refused = new ConnectionError('refused', { requestMaybeSent: false });
const reset = new ConnectionError('reset', { requestMaybeSent: true });
const timeout = new TimeoutError('slow');

describe('retry classification (ARCHITECTURE.md retry table)', () => {
  it.each([408, 429, 500, 502, 503, 504])('idempotent requests retry HTTP %i', (status) => {
    expect(classifyFailure(api(status), 'idempotent')).toBe('retry');
  });

  it.each([400, 401, 403, 404, 409, 422])('idempotent requests do not retry HTTP %i', (status) => {
    expect(classifyFailure(api(status), 'idempotent')).toBe('fatal');
  });

  it('idempotent requests retry every network failure and timeout', () => {
    for (const error of [refused, reset, timeout]) expect(classifyFailure(error, 'idempotent')).toBe('retry');
  });

  it.each([429, 503])('the finance POST retries HTTP %i: the server surely did not process it', (status) => {
    expect(classifyFailure(api(status), 'non-idempotent')).toBe('retry');
  });

  it.each([500, 502, 504])('the finance POST treats HTTP %i as ambiguous', (status) => {
    expect(classifyFailure(api(status), 'non-idempotent')).toBe('ambiguous');
  });

  it.each([303, 307, 0])(
    'a redirect that was not followed (status %i; 0 when fetch refused it unread) is ambiguous for the finance POST, fatal otherwise',
    (status) => {
      const redirect = new RedirectError(status, {}, 'not followed', undefined);
      expect(classifyFailure(redirect, 'non-idempotent')).toBe('ambiguous');
      expect(classifyFailure(redirect, 'idempotent')).toBe('fatal');
    },
  );

  it('the finance POST retries a connection that failed before the request was written', () => {
    expect(classifyFailure(refused, 'non-idempotent')).toBe('retry');
  });

  it('the finance POST treats a reset or timeout after sending as ambiguous', () => {
    expect(classifyFailure(reset, 'non-idempotent')).toBe('ambiguous');
    expect(classifyFailure(timeout, 'non-idempotent')).toBe('ambiguous');
  });

  it.each([400, 401, 403, 404, 408, 422])('the finance POST does not retry HTTP %i', (status) => {
    expect(classifyFailure(api(status), 'non-idempotent')).toBe('fatal');
  });

  it('ambiguous failures are re-sent only with retryAmbiguous', () => {
    expect(shouldRetry(api(502), 'non-idempotent', false)).toBe(false);
    expect(shouldRetry(api(502), 'non-idempotent', true)).toBe(true);
    expect(shouldRetry(reset, 'non-idempotent', true)).toBe(true);
  });

  it("the 'never' policy retries nothing", () => {
    expect(shouldRetry(api(503), 'never', true)).toBe(false);
    expect(shouldRetry(refused, 'never', true)).toBe(false);
  });

  it.each(['invalid_client', 'invalid_scope', 'unauthorized_client', 'invalid_grant'])(
    'the OAuth error %s is never retried, whatever its status',
    (code) => {
      expect(classifyFailure(new TokenError(code, code, { status: 503 }), 'idempotent')).toBe('fatal');
    },
  );

  it('token endpoint 5xx and 429 are retried', () => {
    expect(classifyFailure(new TokenError('http_error', 'x', { status: 502 }), 'idempotent')).toBe('retry');
    expect(classifyFailure(new TokenError('temporarily_unavailable', 'x', { status: 429 }), 'idempotent')).toBe(
      'retry',
    );
  });

  it('caller aborts, configuration errors and foreign errors are never retried', () => {
    for (const error of [
      new AbortError('x'),
      new ConfigurationError('x'),
      new Error('x'),
      new BadRequestError(400, undefined, {}),
    ]) {
      expect(shouldRetry(error, 'idempotent', true)).toBe(false);
    }
  });
});
