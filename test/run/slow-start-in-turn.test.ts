/**
 * Slow start's step by rate (docs/performance.md) is for a long path, whose round's answers come
 * back together. Over real HTTP on 127.0.0.1, a service that answers a round one after another
 * (the first request of each eight in 100 ms, each next one 25 ms later, as a service serving them
 * in turn does) has round trips as long as a far path's, but the window only doubles on them:
 * its first answers say nothing of what a wider burst would meet there.
 */

import { describe, expect, it } from 'vitest';
import { publishWatchingWindow, useHostileService } from '../support/hostile-service.js';

const start = useHostileService();

/** `answerMs` undefined: that request is never answered. */
async function publishTo(answerMs: (hit: number) => number | undefined, count = 40, timeoutMs?: number) {
  const service = await start((request, res) => {
    if (request.route !== 'finance') return false;
    const wait = answerMs(request.hit);
    if (wait === undefined) return true;
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}');
    }, wait);
    return true;
  });
  return publishWatchingWindow(service, count, timeoutMs === undefined ? {} : { timeoutMs });
}

describe("slow start's step by rate", () => {
  it('doubles, and no more, on a round whose answers came back one after another', async () => {
    const { report, events } = await publishTo((hit) => 100 + 25 * ((hit - 1) % 8));
    expect(report.recordsSent).toBe(40);
    // Round trips of 100 to 175 ms would be a step to about 57 (512 requests a second).
    expect(events[1]).toMatchObject({ reason: 'grow', previous: 8, limit: 16 });
  }, 30_000);

  it('judges the whole round: half of it answered together and half later only doubles', async () => {
    // The first four of each eight at 130 ms, the others at 400 ms: the first half alone reads as
    // a long path (a step to about 66).
    const { report, events } = await publishTo((hit) => ((hit - 1) % 8 < 4 ? 130 : 400));
    expect(report.recordsSent).toBe(40);
    expect(events[1]).toMatchObject({ reason: 'grow', previous: 8, limit: 16 });
  }, 30_000);

  it('takes no step past doubling on half a round when the other half is never answered', async () => {
    // Only the first four requests are answered (130 ms, a step to about 66 were they a whole
    // round together): the rest of the round, and everything sent after it, gets no answer.
    const { report, events } = await publishTo((hit) => (hit <= 4 ? 130 : undefined), 16, 5_000);
    expect(report.recordsSent).toBe(4);
    expect(report.recordsUnknown).toBe(12);
    expect(Math.max(...events.map((event) => event.limit))).toBeLessThanOrEqual(16);
  }, 30_000);

  it('takes the step on a round whose answers came back together', async () => {
    const { report, events } = await publishTo(() => 300);
    expect(report.recordsSent).toBe(40);
    // 300 ms round trips: past doubling, up to the 40 that the records allow.
    expect(events[1]?.reason).toBe('grow');
    expect(events[1]?.limit).toBeGreaterThan(16);
  }, 30_000);
});
