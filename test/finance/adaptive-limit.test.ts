import { AbortError } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { AdaptiveLimit } from '../../src/finance/adaptive-limit.js';

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('AdaptiveLimit', () => {
  it('starts with the whole concurrency as its window', async () => {
    const limit = new AdaptiveLimit({ max: 4 });
    for (let i = 0; i < 4; i++) await limit.acquire();
    expect(limit.inFlight).toBe(4);
    let fifth = false;
    const waiting = limit.acquire().then(() => (fifth = true));
    await Promise.resolve();
    expect(fifth).toBe(false);
    limit.release();
    await waiting;
    expect(fifth).toBe(true);
  });

  it('halves the window once per 429 event, not once per 429 of requests already in flight', () => {
    const time = clock();
    const limit = new AdaptiveLimit({ max: 16, now: time.now });
    limit.onRateLimited(1000, true);
    limit.onRateLimited(1000, true);
    expect(limit.window).toBe(8);
    time.advance(1000);
    limit.onRateLimited(1000, true);
    expect(limit.window).toBe(4);
  });

  it('never shrinks below one', () => {
    const time = clock();
    const limit = new AdaptiveLimit({ max: 2, now: time.now });
    for (let i = 0; i < 5; i++) {
      limit.onRateLimited(10);
      time.advance(10);
    }
    expect(limit.window).toBe(1);
  });

  it('grows back additively, one slot per window of successes, up to the concurrency', () => {
    const time = clock();
    const limit = new AdaptiveLimit({ max: 4, now: time.now });
    limit.onRateLimited(undefined);
    expect(limit.window).toBe(2);
    limit.onSuccess();
    expect(limit.window).toBe(2);
    limit.onSuccess();
    expect(limit.window).toBe(3);
    for (let i = 0; i < 10; i++) limit.onSuccess();
    expect(limit.window).toBe(4);
  });

  it('pauses every sender until the Retry-After deadline', async () => {
    const limit = new AdaptiveLimit({ max: 4 });
    limit.onRateLimited(120);
    const started = performance.now();
    await limit.acquire();
    expect(performance.now() - started).toBeGreaterThanOrEqual(110);
  });

  it('keeps no more requests in flight than the budget the last period taught', () => {
    const time = clock();
    const limit = new AdaptiveLimit({ max: 16, now: time.now });
    for (let i = 0; i < 5; i++) limit.onSuccess();
    limit.onRateLimited(1000);
    expect(limit.budget).toBe(5);
    time.advance(1000);
    expect(limit.limit).toBe(5);
  });

  it('forgets the budget after two periods without a 429', () => {
    const time = clock();
    const limit = new AdaptiveLimit({ max: 16, now: time.now });
    limit.onSuccess();
    limit.onRateLimited(1000);
    time.advance(1000 + 2000);
    expect(limit.budget).toBeUndefined();
  });

  it('with adaptive off keeps a fixed window and never pauses', () => {
    const limit = new AdaptiveLimit({ max: 8, adaptive: false });
    limit.onRateLimited(5000);
    expect(limit.window).toBe(8);
    expect(limit.pauseRemainingMs).toBe(0);
  });

  it('rejects a waiting sender with AbortError when the signal fires', async () => {
    const limit = new AdaptiveLimit({ max: 1 });
    await limit.acquire();
    const controller = new AbortController();
    const waiting = limit.acquire(controller.signal);
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(AbortError);
  });
});
