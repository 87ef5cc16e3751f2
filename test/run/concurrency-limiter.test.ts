import { describe, expect, it } from 'vitest';
import { AbortError } from '../../src/errors.js';
import type { ConcurrencyHookEvent } from '../../src/http/public-types.js';
import { ConcurrencyLimiter, type Departure } from '../../src/run/engine.js';

function clock(start = 1_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

/**
 * Drives a limiter through `rounds` round trips against a service whose answer takes
 * `rttFor(window)` ms: each round fills the window, lets the clock pass, and answers every request.
 */
async function drive(
  limiter: ConcurrencyLimiter,
  time: ReturnType<typeof clock>,
  rttFor: (n: number) => number,
  rounds: number,
  newConnection = false,
) {
  const windows: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const n = limiter.limit;
    windows.push(n);
    for (let i = 0; i < n; i++) await limiter.acquire();
    const startedAt = time.now();
    const rtt = rttFor(n);
    time.advance(rtt);
    for (let i = 0; i < n; i++) {
      limiter.onRoundTrip({ startedAt, endedAt: startedAt + rtt, newConnection });
      limiter.release();
    }
    time.advance(1);
  }
  return windows;
}

function recorder() {
  const events: ConcurrencyHookEvent[] = [];
  return { events, onChange: (event: ConcurrencyHookEvent) => events.push(event) };
}

describe('ConcurrencyLimiter', () => {
  it('starts at 8 (or the bound, when lower) and says so once', async () => {
    const { events, onChange } = recorder();
    const limiter = new ConcurrencyLimiter({ max: 32, operation: 'finance', onChange });
    expect(limiter.limit).toBe(8);
    await limiter.acquire();
    await limiter.acquire();
    expect(events).toEqual([{ operation: 'finance', limit: 8, previous: 8, inFlight: 0, reason: 'start' }]);
    expect(new ConcurrencyLimiter({ max: 3, operation: 'upload' }).limit).toBe(3);
  });

  it('lets no more than the window in hand', async () => {
    const limiter = new ConcurrencyLimiter({ max: 2, operation: 'upload' });
    await limiter.acquire();
    await limiter.acquire();
    let third = false;
    const waiting = limiter.acquire().then(() => (third = true));
    await Promise.resolve();
    expect(third).toBe(false);
    limiter.release();
    await waiting;
    expect(third).toBe(true);
  });

  it('grows to the bound while round trips stay at their minimum, doubling where they are short', async () => {
    const time = clock();
    const { events, onChange } = recorder();
    const limiter = new ConcurrencyLimiter({ max: 32, operation: 'finance', onChange, now: time.now });
    const windows = await drive(limiter, time, () => 20, 6);
    expect(windows.slice(0, 3)).toEqual([8, 16, 32]);
    expect(limiter.limit).toBe(32);
    expect(events.map((event) => [event.reason, event.previous, event.limit])).toEqual([
      ['start', 8, 8],
      ['grow', 8, 16],
      ['grow', 16, 32],
    ]);
    expect(events[1]).toMatchObject({ rttMs: 20, minRttMs: 20 });
  });

  it('in slow start, goes at once to the window of 512 requests a second where round trips are long', async () => {
    // 50 ms: 25 in flight are 500 requests a second, more than doubling's 16.
    const time = clock();
    const limiter = new ConcurrencyLimiter({ max: 64, operation: 'finance', now: time.now });
    expect(await drive(limiter, time, () => 50, 3)).toEqual([8, 25, 50]);
    // 150 ms (a round trip and a handshake over a path of 50 ms, say): the bound at once.
    const far = clock();
    const wide = new ConcurrencyLimiter({ max: 64, operation: 'finance', now: far.now });
    expect(await drive(wide, far, () => 150, 2)).toEqual([8, 64]);
    // The bound still bounds, and a knee found still slows growth to one request per round.
    const bounded = new ConcurrencyLimiter({ max: 12, operation: 'finance', now: far.now });
    expect(await drive(bounded, far, () => 150, 2)).toEqual([8, 12]);
    const kneed = new ConcurrencyLimiter({
      max: 32,
      operation: 'finance',
      now: far.now,
      resume: { limit: 8, knee: 8 },
    });
    expect(await drive(kneed, far, () => 150, 3)).toEqual([8, 9, 10]);
  });

  it('goes back to the window the first batch narrowed once that round is answered with no queue', async () => {
    // A client whose last publish left the window at 60 (and its knee there), batches of 170 kB:
    // the blind first round holds what 1.9 MB allows, 11; its answers show no queue.
    const time = clock();
    const { events, onChange } = recorder();
    const resume = { limit: 60, knee: 60 };
    const limiter = new ConcurrencyLimiter({
      max: 64,
      operation: 'finance',
      resume,
      startBytes: 1_900_000,
      onChange,
      now: time.now,
    });
    limiter.start();
    limiter.fitToSize(170_000);
    expect(limiter.limit).toBe(11);
    expect(await drive(limiter, time, () => 100, 2)).toEqual([11, 60]);
    // Then one request per round past the knee, as the last publish left it.
    expect(events.map((event) => [event.reason, event.limit])).toEqual([
      ['start', 60],
      ['size', 11],
      ['grow', 60],
      ['grow', 61],
    ]);
    // A first round whose answers spread out, as a queue at the service spreads them, does not go back.
    const queued = clock();
    const narrow = new ConcurrencyLimiter({
      max: 64,
      operation: 'finance',
      resume,
      startBytes: 1_900_000,
      now: queued.now,
    });
    narrow.start();
    narrow.fitToSize(170_000);
    for (let i = 0; i < 11; i++) await narrow.acquire();
    const startedAt = queued.now();
    for (let i = 0; i < 11; i++) {
      narrow.onRoundTrip({ startedAt, endedAt: startedAt + 100 + 40 * i });
      narrow.release();
    }
    expect(narrow.limit).toBeLessThanOrEqual(11);
  });

  it('does not read the handshakes of new connections as a queue when warm answers say otherwise', async () => {
    // The round after a jump from 8 to 32: a few requests reuse the first round's connections, the
    // rest open their own, and their round trips carry the handshake (here half a round trip more).
    const round = async (warmMs: number, newMs: number) => {
      const time = clock();
      const { events, onChange } = recorder();
      const limiter = new ConcurrencyLimiter({ max: 32, operation: 'finance', onChange, now: time.now });
      // The first round opens a connection for each of its requests.
      await drive(limiter, time, () => 150, 1, true);
      expect(limiter.limit).toBe(32);
      for (let i = 0; i < 32; i++) await limiter.acquire();
      const startedAt = time.now();
      time.advance(newMs);
      // Half a window of answers makes a round: two over warm connections, fourteen over new ones.
      for (let i = 0; i < 16; i++) {
        const warm = i < 2;
        limiter.onRoundTrip({ startedAt, endedAt: startedAt + (warm ? warmMs : newMs), newConnection: !warm });
        limiter.release();
      }
      return events.filter((event) => event.reason === 'latency');
    };
    // The first round's answers, all over new connections, took 150 ms, a handshake included: the
    // new connections' answers are held against that; warm answers take 100.
    expect(await round(100, 160)).toEqual([]);
    // A service that queues holds up the answers over new connections too: the window shrinks.
    const queued = await round(300, 360);
    expect(queued).toHaveLength(1);
    expect(queued[0]).toMatchObject({ previous: 32, rttMs: 360, minRttMs: 150 });
    // Nor do a few warm answers that reached the service ahead of a queue hide it.
    const ahead = await round(100, 450);
    expect(ahead).toHaveLength(1);
    expect(ahead[0]).toMatchObject({ previous: 32, rttMs: 450 });
  });

  it('holds a request still out as a slow answer: no step by rate while it is out, the step once it landed', async () => {
    const time = clock();
    const limiter = new ConcurrencyLimiter({ max: 64, operation: 'finance', now: time.now });
    limiter.start();
    // One request stays out while a thousand others leave and land behind it.
    const stuck = limiter.depart();
    for (let i = 0; i < 1_000; i++) limiter.landed(limiter.depart());
    time.advance(200);
    /** A round filling the window, every answer after 300 ms: together, as over a long path. */
    const roundTogether = async () => {
      const n = limiter.limit;
      const departures: Departure[] = [];
      for (let i = 0; i < n; i++) {
        await limiter.acquire();
        departures.push(limiter.depart());
      }
      const startedAt = time.now();
      time.advance(300);
      for (const departure of departures) {
        limiter.onRoundTrip({ startedAt, endedAt: time.now() });
        limiter.landed(departure);
        limiter.release();
      }
      time.advance(1);
    };
    // The stuck request has been out 500 ms against answers of 300: the round only doubles.
    await roundTogether();
    expect(limiter.limit).toBe(16);
    limiter.landed(stuck);
    // Nothing out any more: 300 ms answers together take the step to the bound (512 a second).
    await roundTogether();
    expect(limiter.limit).toBe(64);
  });

  it('counts a request as opening a connection only while more are on the wire than ever before', () => {
    const limiter = new ConcurrencyLimiter({ max: 8, operation: 'finance' });
    const departures = [limiter.depart(), limiter.depart()];
    expect(departures.map((each) => each.newConnection)).toEqual([true, true]);
    limiter.landed(departures[0] as Departure);
    // A departure lands once, however often it is reported.
    limiter.landed(departures[0] as Departure);
    // One connection came free: the next request reuses it, the one after needs a third.
    departures.push(limiter.depart(), limiter.depart());
    expect(departures.slice(2).map((each) => each.newConnection)).toEqual([false, true]);
    for (const each of departures.slice(1)) limiter.landed(each);
    const next = [limiter.depart(), limiter.depart(), limiter.depart(), limiter.depart()];
    expect(next.map((each) => each.newConnection)).toEqual([false, false, false, true]);
  });

  it('finds the knee of a queueing service and stays within alpha..beta requests above it', async () => {
    const time = clock();
    const knee = 12;
    const limiter = new ConcurrencyLimiter({ max: 64, operation: 'finance', now: time.now });
    // Up to `knee` requests are served at once in 50 ms; past it they queue (Little's law).
    const windows = await drive(limiter, time, (n) => 50 * Math.max(1, n / knee), 40);
    const settled = windows.slice(10);
    expect(Math.min(...settled)).toBeGreaterThanOrEqual(knee);
    // alpha..beta at these windows is 4..8 requests of queue.
    expect(Math.max(...settled)).toBeLessThanOrEqual(knee + 8);
    expect(Math.max(...settled) - Math.min(...settled)).toBeLessThanOrEqual(4);
  });

  it('shrinks when round trips inflate, and says why', async () => {
    const time = clock();
    const { events, onChange } = recorder();
    const limiter = new ConcurrencyLimiter({ max: 32, operation: 'upload', onChange, now: time.now });
    await drive(limiter, time, () => 100, 4);
    expect(limiter.limit).toBe(32);
    await drive(limiter, time, () => 400, 2);
    expect(limiter.limit).toBeLessThan(32);
    const shrink = events.find((event) => event.reason === 'latency');
    expect(shrink).toMatchObject({ operation: 'upload', previous: 32, rttMs: 400, minRttMs: 100 });
    // Four times the no-load time: the service handled about a quarter of the window without queueing.
    expect(shrink?.limit).toBeLessThanOrEqual(32 / 4 + 5);
  });

  it('reports the round trip a change was decided on, not the last one answered', async () => {
    const time = clock();
    const { events, onChange } = recorder();
    const limiter = new ConcurrencyLimiter({ max: 32, operation: 'finance', onChange, now: time.now });
    await drive(limiter, time, () => 100, 4);
    expect(limiter.limit).toBe(32);
    for (let i = 0; i < 32; i++) await limiter.acquire();
    const startedAt = time.now();
    time.advance(400);
    // Half a window of answers makes a round: fifteen slow ones, then one faster than any before,
    // the last answered; the round is judged against the least round trip known by then.
    for (let i = 0; i < 16; i++) {
      limiter.onRoundTrip({ startedAt, endedAt: startedAt + (i < 15 ? 400 : 50) });
      limiter.release();
    }
    const shrink = events.find((event) => event.reason === 'latency');
    expect(shrink).toMatchObject({ previous: 32, rttMs: 400, minRttMs: 50 });
  });

  it('halves on a 429 or a 503, once per event', () => {
    const time = clock();
    const { events, onChange } = recorder();
    const limiter = new ConcurrencyLimiter({ max: 32, initial: 32, operation: 'finance', onChange, now: time.now });
    limiter.onBackPressure('rate-limited', 1000);
    limiter.onBackPressure('rate-limited', 1000);
    expect(limiter.limit).toBe(16);
    time.advance(1000);
    limiter.onBackPressure('unavailable');
    expect(limiter.limit).toBe(8);
    expect(events.map((event) => event.reason)).toEqual(['rate-limited', 'unavailable']);
    for (let i = 0; i < 10; i++) {
      time.advance(10);
      limiter.onBackPressure('unavailable');
    }
    expect(limiter.limit).toBe(1);
  });

  it('halves once for push-back on requests sent before the last halving, even with no wait and no round trip known', () => {
    const time = clock();
    const { events, onChange } = recorder();
    const limiter = new ConcurrencyLimiter({ max: 32, operation: 'finance', onChange, now: time.now });
    const sentAt = time.now();
    time.advance(5);
    // The first round answered together with 503s and no Retry-After: one event, not 8 -> 4 -> 2 -> 1.
    for (let i = 0; i < 8; i++) {
      time.advance(1);
      limiter.onBackPressure('unavailable', 0, sentAt);
    }
    expect(limiter.limit).toBe(4);
    // A request sent into the halved window that is pushed back too is a new event.
    const later = time.now();
    time.advance(5);
    limiter.onBackPressure('timed-out', 0, later);
    expect(limiter.limit).toBe(2);
    expect(events.map((event) => event.reason)).toEqual(['unavailable', 'timed-out']);
  });

  it('grows only while the slowest answer, scaled by the growth, stays within half the attempt timeout', async () => {
    // A link whose bandwidth the batches share: each answer takes 400 ms per batch in flight.
    const sharedLink = (n: number) => 400 * n;
    const tight = clock();
    const held = new ConcurrencyLimiter({ max: 32, operation: 'finance', answerWithinMs: 6_000, now: tight.now });
    // 8 in flight take 3.2 s: doubling would take 6.4 s, past the 6 s timeout, so the window holds.
    expect(await drive(held, tight, sharedLink, 4)).toEqual([8, 8, 8, 8]);
    const loose = clock();
    const grown = new ConcurrencyLimiter({ max: 32, operation: 'finance', answerWithinMs: 60_000, now: loose.now });
    expect((await drive(grown, loose, sharedLink, 3)).at(-1)).toBeGreaterThan(8);
  });

  it('ignores round trips of requests sent before the last change', async () => {
    const time = clock();
    const limiter = new ConcurrencyLimiter({ max: 32, initial: 16, operation: 'finance', now: time.now });
    const before = time.now();
    time.advance(10);
    limiter.onBackPressure('rate-limited');
    expect(limiter.limit).toBe(8);
    // Slow answers to requests sent before the halving: they measured the old window.
    for (let i = 0; i < 16; i++) limiter.onRoundTrip({ startedAt: before, endedAt: before + 1000 });
    expect(limiter.limit).toBe(8);
  });

  it('does not grow a window the run does not fill', async () => {
    const time = clock();
    const limiter = new ConcurrencyLimiter({ max: 32, operation: 'finance', now: time.now });
    await limiter.acquire();
    for (let i = 0; i < 20; i++) {
      const startedAt = time.now();
      time.advance(50);
      limiter.onRoundTrip({ startedAt, endedAt: time.now() });
    }
    expect(limiter.limit).toBe(8);
  });

  it('compares large requests with large ones: a 4 MiB body taking longer is not queueing', async () => {
    const time = clock();
    const limiter = new ConcurrencyLimiter({ max: 32, operation: 'upload', now: time.now });
    for (let i = 0; i < 8; i++) await limiter.acquire();
    for (let round = 0; round < 4; round++) {
      const startedAt = time.now();
      time.advance(100);
      for (let i = 0; i < 8; i++) {
        const big = i % 2 === 0;
        limiter.onRoundTrip({ startedAt, endedAt: startedAt + (big ? 100 : 10), bytes: big ? 4 * 1024 ** 2 : 1024 });
      }
      time.advance(1);
    }
    expect(limiter.limit).toBeGreaterThan(8);
  });

  it('with adaptive off stays at the bound whatever happens', async () => {
    const time = clock();
    const limiter = new ConcurrencyLimiter({ max: 5, adaptive: false, operation: 'finance', now: time.now });
    expect(limiter.limit).toBe(5);
    limiter.onBackPressure('rate-limited', 1000);
    await drive(limiter, time, (n) => 10 * n, 5);
    expect(limiter.limit).toBe(5);
  });

  it('rejects a waiting loop with AbortError when the signal fires', async () => {
    const limiter = new ConcurrencyLimiter({ max: 1, operation: 'finance' });
    await limiter.acquire();
    const controller = new AbortController();
    const waiting = limiter.acquire(controller.signal);
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(AbortError);
  });

  it('after a push-back grows one request per round, not back to where it was refused', async () => {
    const time = clock();
    const limiter = new ConcurrencyLimiter({ max: 32, operation: 'finance', now: time.now });
    expect(await drive(limiter, time, () => 20, 3)).toEqual([8, 16, 32]);
    limiter.onBackPressure('rate-limited', 0);
    expect(limiter.limit).toBe(16);
    time.advance(100);
    // Calm rounds after the halving: slow start does not come back.
    expect(await drive(limiter, time, () => 20, 4)).toEqual([16, 17, 18, 19]);
  });
});
