/**
 * Slow start's step by rate (docs/performance.md) against a service that limits requests at once
 * rather than a rate, over real HTTP on 127.0.0.1: up to 10 at once are answered in 150 ms (the
 * first round, a cold start, in 600 ms), past that it answers 429 at once. The first round's
 * answers take the window from 8 to its bound of 64 in one step, so the service meets 64 requests
 * in the second round trip: the refusals of that step are one event (one halving), and every batch
 * is still sent, none unknown. The first round is long beside the pauses of a machine busy with
 * other tests: they spread its answers out, and answers of 150 ms came back over 183–290 ms under
 * load, which is not a round answered together.
 */

import { describe, expect, it } from 'vitest';
import { publishWatchingWindow, useHostileService } from '../support/hostile-service.js';

const start = useHostileService();

describe("slow start's step against a service that limits requests at once", () => {
  it('halves once for the refusals of the step to 64, and sends every batch', async () => {
    let held = 0;
    let refused = 0;
    const service = await start((request, res) => {
      if (request.route !== 'finance') return false;
      if (held >= 10) {
        refused++;
        res.writeHead(429, { 'retry-after': '1', 'content-type': 'application/json' }).end('{"success":false}');
        return true;
      }
      held++;
      setTimeout(
        () => {
          held--;
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}');
        },
        request.hit <= 8 ? 600 : 150,
      );
      return true;
    });
    // The default attempt timeout: at 5 s, the step would stop where 600 ms answers stay within half of it.
    const { report, events } = await publishWatchingWindow(service, 100, { timeoutMs: 30_000 });
    expect({ sent: report.recordsSent, unknown: report.recordsUnknown, failed: report.recordsFailed }).toEqual({
      sent: 100,
      unknown: 0,
      failed: 0,
    });
    expect(events[1]).toMatchObject({ reason: 'grow', previous: 8, limit: 64 });
    // The 54 or so refused at once are one event: halved to 32, and grown from there, not halved again.
    expect(events[2]).toMatchObject({ reason: 'rate-limited', previous: 64, limit: 32 });
    expect(events[3]?.reason).toBe('grow');
    expect(refused).toBeGreaterThan(0);
    // The halved window is a knee: growth past it is one request per round, never a step back to 64.
    expect(Math.max(...events.slice(2).map((event) => event.limit))).toBeLessThanOrEqual(40);
  }, 30_000);
});
