/**
 * A client's next publish starts where its last one left the in-flight window: over real HTTP on
 * 127.0.0.1 against a service whose answers take a set time, and the memory's own rules (what it
 * keeps, for how long, and what a resumed window may start at).
 */

import type { ConcurrencyHookEvent } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { ConcurrencyLimiter, WindowMemory } from '../../src/run/engine.js';
import { useHostileService } from '../support/hostile-service.js';
import { financeRecord } from '../support/records.js';
import { slowService } from '../support/slow-service.js';

/** How long a client remembers where its last publish left the window: ten minutes. */
const WINDOW_MEMORY_MS = 10 * 60_000;

const start = useHostileService();

function records(count: number) {
  return Array.from({ length: count }, (_, i) => financeRecord(i, { transactionNumber: `t-${i}` }));
}

/** Each run's window events, one list per publish. */
function runLog() {
  const runs: ConcurrencyHookEvent[][] = [];
  const hooks = {
    concurrency: (event: ConcurrencyHookEvent) => {
      if (event.reason === 'start') runs.push([]);
      runs.at(-1)?.push(event);
    },
  };
  return { runs, hooks };
}

const lastLimit = (events: readonly ConcurrencyHookEvent[]) => events.at(-1)?.limit;

/**
 * A client whose first publish, to a service answering in a flat 150 ms, grew its window past 8. Long
 * enough that a pause of this machine under load (CI runs test files side by side) is small beside
 * it: against 20 ms, and against 80 ms with other work beside the suite, such pauses read as
 * queueing and held the window at 8.
 */
async function clientThatGrew() {
  const { misbehave } = slowService('finance', () => 150);
  const service = await start(misbehave);
  const { runs, hooks } = runLog();
  const client = service.client({ hooks });
  await client.finance.publish('app-1', records(150), { batchSize: 1 });
  const learnt = lastLimit(runs[0] ?? []);
  expect(learnt).toBeGreaterThan(8);
  return { service, client, runs, learnt };
}

describe('a client remembers where its last publish left the window', () => {
  it('starts its next publish there; a new client starts at 8', async () => {
    const { service, client, runs, learnt } = await clientThatGrew();

    // More batches than the bound, so that the number of records does not bound this run's window.
    const report = await client.finance.publish('app-1', records(80), { batchSize: 1 });
    expect(report.recordsSent).toBe(80);
    expect(runs[1]?.[0]).toMatchObject({ reason: 'start', limit: learnt, resumed: true });

    const other = runLog();
    await service.client({ hooks: other.hooks }).finance.publish('app-1', records(20), { batchSize: 1 });
    expect(other.runs[0]?.[0]).toMatchObject({ reason: 'start', limit: 8 });
    expect(other.runs[0]?.[0]).not.toHaveProperty('resumed');
  });

  it('is not lowered by a short publish, whose window could not reach it', async () => {
    const { client, runs, learnt } = await clientThatGrew();
    await client.finance.publish('app-1', records(3), { batchSize: 1 });
    expect(runs[1]?.[0]).toMatchObject({ reason: 'start', limit: 3 });
    await client.finance.publish('app-1', records(80), { batchSize: 1 });
    expect(runs[2]?.[0]).toMatchObject({ reason: 'start', limit: learnt, resumed: true });
  });

  it('after a 429, starts where the service left it and grows past that one request per round', async () => {
    // A bound of 64, so that the halved window stays above the start of 8 even when this machine's
    // load has the first run settle well below it; answers in 120 ms, for the same reason as above.
    let untilLimited = Number.POSITIVE_INFINITY;
    const { misbehave: slow } = slowService('finance', () => 120);
    const service = await start((request, res) => {
      if (request.route === 'finance' && --untilLimited === 0) {
        res.writeHead(429, { 'retry-after': '0', 'content-type': 'application/json' }).end('{"success":false}');
        return true;
      }
      return slow(request, res);
    });
    const { runs, hooks } = runLog();
    const client = service.client({ hooks, backoff: { initialDelayMs: 0, maxDelayMs: 0 }, maxRetryAfterMs: 0 });
    await client.finance.publish('app-1', records(400), { batchSize: 1, concurrency: 64 });
    untilLimited = 20; // the second run's 20th batch is refused
    const second = await client.finance.publish('app-1', records(60), { batchSize: 1, concurrency: 64 });
    expect(second.recordsSent).toBe(60);
    const halved = runs[1]?.find((event) => event.reason === 'rate-limited');
    expect(halved?.limit).toBeGreaterThan(8);
    const left = lastLimit(runs[1] ?? []);

    await client.finance.publish('app-1', records(200), { batchSize: 1, concurrency: 64 });
    expect(runs[2]?.[0]).toMatchObject({ reason: 'start', limit: left, resumed: true });
    const grow = runs[2]?.find((event) => event.reason === 'grow');
    expect(grow).toBeDefined();
    expect((grow?.limit ?? 0) - (grow?.previous ?? 0)).toBe(1);
  });

  it('is not used with adaptive: false', async () => {
    const { client, runs } = await clientThatGrew();
    await client.finance.publish('app-1', records(20), { batchSize: 1, concurrency: 4, adaptive: false });
    expect(runs[1]?.[0]).toMatchObject({ reason: 'start', limit: 4 });
    expect(runs[1]?.[0]).not.toHaveProperty('resumed');
  });
});

describe('WindowMemory', () => {
  const grown = { limit: 32, knee: undefined, pushedBack: false };

  it('forgets a window after WINDOW_MEMORY_MS', () => {
    let now = 0;
    const memory = new WindowMemory({ now: () => now });
    memory.remember('finance', grown, 32);
    now = WINDOW_MEMORY_MS;
    expect(memory.recall('finance')).toEqual({ limit: 32, knee: undefined });
    now = WINDOW_MEMORY_MS + 1;
    expect(memory.recall('finance')).toBeUndefined();
  });

  it('keeps what it had after a run with nothing to go on, and refreshes it after a capped one', () => {
    let now = 0;
    const memory = new WindowMemory({ now: () => now });
    memory.remember('finance', grown, 32);
    memory.remember('finance', undefined, 32);
    now = WINDOW_MEMORY_MS - 1;
    memory.remember('finance', { limit: 3, knee: undefined, pushedBack: false }, 3);
    now = 2 * WINDOW_MEMORY_MS - 2;
    expect(memory.recall('finance')).toEqual({ limit: 32, knee: undefined });
  });

  it('takes a pushed-back run whatever its size', () => {
    const memory = new WindowMemory();
    memory.remember('finance', grown, 32);
    memory.remember('finance', { limit: 1, knee: 1, pushedBack: true }, 2);
    expect(memory.recall('finance')).toEqual({ limit: 1, knee: 1 });
  });
});

describe('a resumed window', () => {
  const limiter = (resume: { limit: number; knee: number | undefined }, max = 32) =>
    new ConcurrencyLimiter({ max, operation: 'finance', resume });

  it('never starts below a window never seen, nor above its bound', () => {
    expect(limiter({ limit: 2, knee: 2 }).limit).toBe(8);
    expect(limiter({ limit: 24, knee: undefined }).limit).toBe(24);
    expect(limiter({ limit: 24, knee: undefined }, 12).limit).toBe(12);
  });

  it('keeps a knee at or below the start: growth past it is one request per round', () => {
    let now = 0;
    const grown = (resume: { limit: number; knee: number | undefined } | undefined) => {
      const window = new ConcurrencyLimiter({ max: 32, operation: 'finance', resume, now: () => now });
      window.start();
      // A round that fills the window, answered at its least round trip until the window moves:
      // slow start waits for the whole round, growth past a knee for half of it.
      const start = window.limit;
      for (let i = 0; i < start; i++) void window.acquire();
      now = 1;
      for (let i = 0; i < start && window.limit === start; i++) window.onRoundTrip({ startedAt: 1, endedAt: 21 });
      return window.limit;
    };
    expect(grown(undefined)).toBe(16);
    expect(grown({ limit: 5, knee: 4 })).toBe(9);
  });

  it('reports nothing learnt until a round filled its window', () => {
    const window = limiter({ limit: 24, knee: 16 });
    expect(window.outcome()).toBeUndefined();
    window.onBackPressure('rate-limited');
    expect(window.outcome()).toEqual({ limit: 12, knee: 12, pushedBack: true });
  });
});
