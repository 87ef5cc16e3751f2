import { AbortError } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { AdaptiveLimit } from '../../src/finance/adaptive-limit.js';

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('AdaptiveLimit', () => {
  it('lets `max` requests in flight and no more', async () => {
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

  it('tryAcquire takes a free slot at once, and leaves a pause, a possible hold and a full budget to acquire', () => {
    const time = clock();
    const limit = new AdaptiveLimit({ max: 2, now: time.now });
    expect([limit.tryAcquire(), limit.tryAcquire(), limit.tryAcquire()]).toEqual([true, true, false]);
    expect(limit.inFlight).toBe(2);
    limit.release();
    limit.onRateLimited(500);
    // Paused: nothing taken.
    expect(limit.tryAcquire()).toBe(false);
    expect(limit.inFlight).toBe(1);
    time.advance(600);
    // After a 429 the client-side throttle may hold a request back: acquire decides, at random.
    expect(limit.tryAcquire()).toBe(false);
    const fixed = new AdaptiveLimit({ max: 1, adaptive: false, now: time.now });
    fixed.onRateLimited(500);
    expect(fixed.tryAcquire()).toBe(true);
  });

  it('pauses once per 429 event, stretched by at most a tenth of Retry-After as jitter', () => {
    const time = clock();
    const limit = new AdaptiveLimit({ max: 16, now: time.now, random: () => 0.999 });
    limit.onRateLimited(1000, true);
    const first = limit.pauseRemainingMs;
    expect(first).toBeGreaterThan(1000);
    expect(first).toBeLessThanOrEqual(1100);
    // A 429 answering a request sent before the pause joins the event: the pause does not move.
    time.advance(10);
    limit.onRateLimited(1000, true);
    expect(limit.pauseRemainingMs).toBe(first - 10);
  });

  it('holds requests back once refusals outnumber what the service accepts (client-side throttling)', () => {
    const time = clock();
    const limit = new AdaptiveLimit({ max: 16, now: time.now, random: () => 0.5 });
    for (let i = 0; i < 20; i++) limit.onSuccess();
    expect(limit.holdProbability).toBe(0);
    for (let i = 0; i < 20; i++) {
      time.advance(1);
      limit.onRateLimited(0);
    }
    // 40 requests, 20 accepted: (40 - 1.1 × 20) / 41.
    expect(limit.holdProbability).toBeCloseTo(18 / 41, 5);
    // The history passes: the throttle forgets.
    time.advance(20_000);
    expect(limit.holdProbability).toBe(0);
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
    // The pause (up to a tenth longer, as jitter), then two periods.
    time.advance(1100 + 2000);
    expect(limit.budget).toBeUndefined();
  });

  it('with adaptive off never pauses, learns no budget and never holds back', () => {
    const limit = new AdaptiveLimit({ max: 8, adaptive: false });
    limit.onSuccess();
    for (let i = 0; i < 10; i++) limit.onRateLimited(5000);
    expect(limit.pauseRemainingMs).toBe(0);
    expect(limit.budget).toBeUndefined();
    expect(limit.holdProbability).toBe(0);
    expect(limit.limit).toBe(8);
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
