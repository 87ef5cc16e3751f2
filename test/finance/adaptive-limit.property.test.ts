/**
 * The run takes a slot with `tryAcquire` when one is free at once, and waits in `acquire` otherwise.
 * Under any history of answers, pauses and clock jumps, that path must decide exactly as `acquire`
 * alone: the same slots granted, the same budget, and the same random draws (the throttle's and the
 * jitter's), so that the fast path never skips a pause, the budget or the client-side throttle.
 */
import fc from 'fast-check';
import { seededRandom } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { AdaptiveLimit } from '../../src/finance/adaptive-limit.js';

type Step =
  | { kind: 'take' }
  | { kind: 'release' }
  | { kind: 'accepted' }
  | { kind: 'rate-limited'; retryAfterMs: number; willRetry: boolean }
  | { kind: 'clock'; ms: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 8, arbitrary: fc.constant({ kind: 'take' as const }) },
  { weight: 4, arbitrary: fc.constant({ kind: 'release' as const }) },
  { weight: 3, arbitrary: fc.constant({ kind: 'accepted' as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('rate-limited' as const),
      retryAfterMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 2_000 })),
      willRetry: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('clock' as const), ms: fc.integer({ min: 1, max: 3_000 }) }) },
);

/** A limit whose clock the test moves, and which records every random number it draws. */
function recordedLimit(max: number, adaptive: boolean, seed: number, clock: { now: number }) {
  const random = seededRandom(seed);
  const draws: number[] = [];
  const limit = new AdaptiveLimit({
    max,
    adaptive,
    now: () => clock.now,
    random: () => {
      const value = random();
      draws.push(value);
      return value;
    },
  });
  return { limit, draws };
}

/** Whether a slot is granted without waiting on a timer: `acquire` given a few microtask turns, then given up. */
async function takeAtOnce(limit: AdaptiveLimit, fastPathFirst: boolean): Promise<boolean> {
  if (fastPathFirst && limit.tryAcquire()) return true;
  const controller = new AbortController();
  let granted = false;
  const waiting = limit.acquire(controller.signal).then(
    () => {
      granted = true;
    },
    () => {},
  );
  for (let turn = 0; turn < 10; turn++) await Promise.resolve();
  if (!granted) controller.abort();
  await waiting;
  return granted;
}

describe('AdaptiveLimit.tryAcquire', () => {
  it('tryAcquire, else acquire, decides as acquire alone, under any history', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.array(step, { minLength: 1, maxLength: 120 }),
        async (max, adaptive, seed, steps) => {
          const clock = { now: 1_000_000 };
          const run = recordedLimit(max, adaptive, seed, clock);
          const alone = recordedLimit(max, adaptive, seed, clock);
          for (const each of steps) {
            if (each.kind === 'take') {
              const viaRun = await takeAtOnce(run.limit, true);
              const viaAcquire = await takeAtOnce(alone.limit, false);
              expect(viaRun).toBe(viaAcquire);
            } else if (each.kind === 'release') {
              run.limit.release();
              alone.limit.release();
            } else if (each.kind === 'accepted') {
              run.limit.onSuccess();
              alone.limit.onSuccess();
            } else if (each.kind === 'rate-limited') {
              run.limit.onRateLimited(each.retryAfterMs, each.willRetry);
              alone.limit.onRateLimited(each.retryAfterMs, each.willRetry);
            } else {
              clock.now += each.ms;
            }
            expect(run.draws).toEqual(alone.draws);
            expect(run.limit.inFlight).toBe(alone.limit.inFlight);
            expect(run.limit.limit).toBe(alone.limit.limit);
            expect(run.limit.budget).toBe(alone.limit.budget);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
