import fc from 'fast-check';
import { MAX_RETRY_AFTER_MS, parseRetryAfterHeader } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { waitMs } from '../../src/http/retry.js';

const now = Date.UTC(2025, 0, 1, 12, 0, 0);
const fixedBackoff = { initialDelayMs: 100, maxDelayMs: 1_000, jitter: 0, random: () => 0.5 };

describe('Retry-After parsing', () => {
  it('reads delta-seconds as milliseconds, capped at MAX_RETRY_AFTER_MS', () => {
    fc.assert(
      fc.property(fc.nat({ max: 10_000_000 }), (seconds) => {
        expect(parseRetryAfterHeader(String(seconds), now)).toBe(Math.min(seconds * 1000, MAX_RETRY_AFTER_MS));
      }),
    );
  });

  it('reads an HTTP date as the time until that date, never negative and capped', () => {
    fc.assert(
      fc.property(fc.integer({ min: -86_400, max: 86_400 }), (offsetSeconds) => {
        const header = new Date(now + offsetSeconds * 1000).toUTCString();
        const expected = Math.min(Math.max(offsetSeconds * 1000, 0), MAX_RETRY_AFTER_MS);
        expect(parseRetryAfterHeader(header, now)).toBe(expected);
      }),
    );
  });

  it('returns undefined for any value that is neither digits nor an HTTP date', () => {
    fc.assert(
      fc.property(
        fc.string().filter((s) => !/^\s*\d+\s*$/.test(s) && !/^\s*[A-Za-z]{3},/.test(s)),
        (value) => {
          expect(parseRetryAfterHeader(value, now)).toBeUndefined();
        },
      ),
    );
    for (const value of ['-1', '1.5', '+3', '', '   ', 'soon', '1e3', 'Nope, not a date']) {
      expect(parseRetryAfterHeader(value, now)).toBeUndefined();
    }
  });

  it('always yields a wait between 0 and the cap, or undefined', () => {
    fc.assert(
      fc.property(fc.string(), (value) => {
        const ms = parseRetryAfterHeader(value, now);
        if (ms !== undefined) expect(ms >= 0 && ms <= MAX_RETRY_AFTER_MS).toBe(true);
      }),
    );
  });
});

describe('retry delay', () => {
  it('uses the Retry-After wait when the server sent a valid one', () => {
    expect(waitMs(2_000, 1, fixedBackoff)).toBe(2_000);
    expect(waitMs(2_000, 3, fixedBackoff)).toBe(2_000);
  });

  it('honours a Retry-After of 0 on the first wait only, then backs off', () => {
    expect(waitMs(0, 1, fixedBackoff)).toBe(0);
    expect(waitMs(0, 2, fixedBackoff)).toBe(200);
    expect(waitMs(0, 3, fixedBackoff)).toBe(400);
  });

  it('falls back to exponential backoff when Retry-After is missing or malformed', () => {
    expect(waitMs(parseRetryAfterHeader('garbage'), 1, fixedBackoff)).toBe(100);
    expect(waitMs(undefined, 2, fixedBackoff)).toBe(200);
    expect(waitMs(undefined, 3, fixedBackoff)).toBe(400);
    expect(waitMs(undefined, 10, fixedBackoff)).toBe(1_000);
  });

  it('jitter keeps every backoff delay within [1 - jitter, 1] of the exponential value', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.double({ min: 0, max: 0.999_999, noNaN: true }), (retry, r) => {
        const options = { initialDelayMs: 500, maxDelayMs: 8_000, jitter: 0.25, random: () => r };
        const exponential = Math.min(500 * 2 ** (retry - 1), 8_000);
        const ms = waitMs(undefined, retry, options);
        expect(ms).toBeGreaterThanOrEqual(Math.floor(exponential * 0.75));
        expect(ms).toBeLessThanOrEqual(exponential);
      }),
    );
  });
});
