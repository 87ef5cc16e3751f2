/**
 * `publish` against a token endpoint, a rate limit and a rate budget that misbehave on purpose,
 * over real HTTP on 127.0.0.1. Whatever happens, every record is counted once, nothing is reported
 * `unknown` that was never sent, and the run neither hammers the service nor outlives the caller.
 */

import type { PublishReport, RateBudget } from 'push-api-client';
import {
  AbortError,
  ConnectionError,
  PublishStoppedError,
  PushError,
  RateLimitError,
  ServerError,
} from 'push-api-client';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectAccounted, financeStatuses } from '../support/accounting.js';
import { clientFor } from '../support/clients.js';
import { everyOther, heldBack } from '../support/fault-patterns.js';
import { financeRecords } from '../support/records.js';

let server: RunningEmulator;
beforeEach(async () => {
  server = await startEmulator();
});
afterEach(async () => {
  await server.close();
});

const FOREVER = Number.POSITIVE_INFINITY;

/** A budget that grants every slot, with one method replaced. */
function budgetWith(override: Partial<RateBudget>): RateBudget {
  return { acquire: async () => {}, release: () => {}, onSuccess: () => {}, onRateLimited: () => {}, ...override };
}

/** What `publish` rejected with, and the report the error carries. */
async function rejection(run: Promise<PublishReport>): Promise<{ error: PushError; report: PublishReport }> {
  const error = await run.then(
    () => {
      throw new Error('publish resolved; it was expected to stop');
    },
    (caught: unknown) => caught,
  );
  // A stopped run rejects with PublishStoppedError; the error that stopped it is its cause.
  expect(error).toBeInstanceOf(PublishStoppedError);
  const { report, cause } = error as PublishStoppedError;
  expect(report).toBeDefined();
  expect(cause).toBeInstanceOf(PushError);
  return { error: cause as PushError, report };
}

describe('publish when the token cannot be had', () => {
  it('a token request cut off after it was written fails the batch (never sent) and stops the run', async () => {
    const client = clientFor(server, { maxRetries: 0 });
    server.mock.faults.add({ match: { operation: 'token' }, drop: 'after', times: FOREVER });
    const { error, report } = await rejection(
      client.finance.publish(server.mock.appId, financeRecords(30), { batchSize: 10, concurrency: 1 }),
    );
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.message).toMatch(/^token request failed/);
    expect(financeStatuses(server.mock)).toEqual([]);
    expect(report.batches.map((batch) => batch.status)).toEqual(['failed']);
    expect(report.recordsUnknown).toBe(0);
    expect(report.stoppedBy).toBe(error);
    expectAccounted(report, 30);
  });

  it('a 401 whose token refresh then fails is judged by what was sent: the batch is failed, not unknown', async () => {
    const client = clientFor(server, { maxRetries: 0 });
    const first = await client.tokens.getToken();
    server.mock.revokeToken(first.accessToken);
    // The refresh's own request is cut off after it was written: ambiguous for the token, but the
    // batch was answered 401 (not stored) and never sent again.
    server.mock.faults.add({ match: { operation: 'token' }, drop: 'after', times: FOREVER });
    const { error, report } = await rejection(
      client.finance.publish(server.mock.appId, financeRecords(10), { batchSize: 10, concurrency: 1 }),
    );
    expect(error).toBeInstanceOf(ConnectionError);
    expect(financeStatuses(server.mock)).toEqual([401]);
    expect(report.batches.map((batch) => batch.status)).toEqual(['failed']);
    expect(report.recordsUnknown).toBe(0);
    expect(report.recordsFailed).toBe(10);
    expect(report.stoppedBy).toBe(error);
  });

  it('token answers of 429 get the patience of a rate limit: the batches wait and are sent', async () => {
    // The service asks for a second; the cap turns that into a quarter, which changes no decision.
    const client = clientFor(server, { maxRetries: 1, maxRetryAfterMs: 250 });
    server.mock.faults.add({ match: { operation: 'token' }, status: 429, retryAfter: 1, times: 2 });
    const report = await client.finance.publish(server.mock.appId, financeRecords(20), { batchSize: 10 });
    expect(report.recordsSent).toBe(20);
    expect(report.recordsFailed).toBe(0);
    const tokenStatuses = server.mock.state.requests.filter((r) => r.operation === 'token').map((r) => r.status);
    // The token request's own retry, then a wait of the batch: 429s alone fail no record.
    expect(tokenStatuses).toEqual([429, 429, 200]);
  });
});

describe('publish under a rate limit that never lifts', () => {
  it('a Retry-After of 0 still waits between re-sends: the service is not hammered until the deadline', async () => {
    // The backoff and the deadline at a quarter of their defaults: the same count of sends.
    const client = clientFor(server, { maxRetries: 0, backoff: { initialDelayMs: 125, maxDelayMs: 2_000 } });
    server.mock.faults.add({ match: { operation: 'finance' }, status: 429, retryAfter: 0, times: FOREVER });
    // Every batch is in flight at once: each fails when its next wait would cross the deadline, and
    // the run stops too if one of them meets its 429 after the deadline (timing decides which).
    const outcome = await client.finance
      .publish(server.mock.appId, financeRecords(30), { batchSize: 10, concurrency: 3, rateLimitDeadlineMs: 250 })
      .catch((error: unknown) => error);
    if (outcome instanceof PublishStoppedError) expect(outcome.cause).toBeInstanceOf(RateLimitError);
    const report = outcome instanceof PublishStoppedError ? outcome.report : (outcome as PublishReport);
    expect(report.recordsFailed).toBe(30);
    expect(report.batches.every((batch) => batch.error instanceof RateLimitError)).toBe(true);
    // Backoff from about 60-125 ms: each of the three batches is sent a few times, not thousands.
    expect(financeStatuses(server.mock).length).toBeLessThanOrEqual(3 * 4);
  });

  it('rateLimitDeadlineMs runs out for the whole run at once: the run stops, and the batches not sent stay unsent', async () => {
    // Retry-After: 1 capped to 800 ms, longer than the whole patience (500 ms): the first batch
    // fails at once, its wait forecast past the deadline, and the run goes on (the service may
    // recover before the deadline). The second leaves after the run's pause, 800 ms on, past the
    // deadline, and meets a 429 there: the run stops, and the third is counted as not read (safe
    // to send again), never sent after a pause of its own. Both margins are hundreds of ms.
    const client = clientFor(server, { maxRetries: 0, maxRetryAfterMs: 800 });
    server.mock.faults.add({ match: { operation: 'finance' }, status: 429, retryAfter: 1, times: FOREVER });
    const { error, report } = await rejection(
      client.finance.publish(server.mock.appId, financeRecords(30), {
        batchSize: 10,
        concurrency: 1,
        rateLimitDeadlineMs: 500,
      }),
    );
    expect(error).toBeInstanceOf(RateLimitError);
    expect(report.batches.map((batch) => batch.status)).toEqual(['failed', 'failed']);
    expect(report.recordsNotRead).toBe(10);
    expectAccounted(report, 30);
    expect(financeStatuses(server.mock)).toEqual([429, 429]);
  });

  it('a deadline shorter than a wait fails that batch only: the run goes on while the deadline has not passed', async () => {
    // The first request is refused with a wait (800 ms) longer than the whole patience (500 ms):
    // that batch fails at once, long before the deadline, and the service then accepts the rest.
    const client = clientFor(server, { maxRetries: 0, maxRetryAfterMs: 800 });
    server.mock.faults.add({ match: { operation: 'finance' }, status: 429, retryAfter: 1, times: 1 });
    const report = await client.finance.publish(server.mock.appId, financeRecords(5), {
      batchSize: 1,
      concurrency: 1,
      rateLimitDeadlineMs: 500,
    });
    expect(report.batches.map((batch) => batch.status)).toEqual(['failed', 'sent', 'sent', 'sent', 'sent']);
    expect(report.recordsNotRead).toBe(0);
    expectAccounted(report, 5);
  });

  it('a run of many batches ends soon after the deadline, not one Retry-After per batch later', async () => {
    const client = clientFor(server, { maxRetries: 0, maxRetryAfterMs: 200 });
    server.mock.faults.add({ match: { operation: 'finance' }, status: 429, retryAfter: 1, times: FOREVER });
    const started = performance.now();
    const { report } = await rejection(
      client.finance.publish(server.mock.appId, financeRecords(200), { batchSize: 1, rateLimitDeadlineMs: 500 }),
    );
    const elapsedMs = performance.now() - started;
    expectAccounted(report, 200);
    expect(report.recordsSent).toBe(0);
    // About 200 ms per Retry-After: one per remaining batch would be 40 s.
    expect(elapsedMs).toBeLessThan(5_000);
    expect(financeStatuses(server.mock).length).toBeLessThan(40);
  });
});

describe('publish against a service that is unavailable (503)', () => {
  it('an outage longer than rateLimitDeadlineMs stops the run: the batches not sent stay unsent', async () => {
    // Each batch gives up after its own retries; without the run's patience, every one of the 200
    // batches would be tried in turn against a service that is down (400 requests).
    const client = clientFor(server, { maxRetries: 1, backoff: { initialDelayMs: 20, maxDelayMs: 20 } });
    server.mock.faults.add({ match: { operation: 'finance' }, status: 503, times: FOREVER });
    const started = performance.now();
    const { error, report } = await rejection(
      client.finance.publish(server.mock.appId, financeRecords(200), {
        batchSize: 1,
        concurrency: 2,
        adaptive: false,
        rateLimitDeadlineMs: 300,
      }),
    );
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).status).toBe(503);
    expect(report.stoppedBy).toBe(error);
    expectAccounted(report, 200);
    expect(report.recordsSent + report.recordsUnknown).toBe(0);
    // Every batch tried was refused (nothing stored): failed, safe to send again; the rest unread.
    expect(report.batches.every((batch) => batch.status === 'failed')).toBe(true);
    expect(report.recordsNotRead).toBeGreaterThan(100);
    expect(financeStatuses(server.mock).length).toBeLessThan(200);
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('an outage shorter than the deadline fails the batches it met, and the run goes on', async () => {
    const client = clientFor(server, { maxRetries: 0 });
    server.mock.faults.add({ match: { operation: 'finance' }, status: 503, times: 3 });
    const report = await client.finance.publish(server.mock.appId, financeRecords(10), {
      batchSize: 1,
      concurrency: 1,
      adaptive: false,
    });
    expect(report.batches.map((batch) => batch.status)).toEqual([...Array(3).fill('failed'), ...Array(7).fill('sent')]);
    expect(report.stoppedBy).toBeUndefined();
    expectAccounted(report, 10);
  });

  it('two outages apart, with the input idle between them, are not one: the patience begins afresh', async () => {
    // One batch fails with a 503 (no retries), the input then gives nothing for longer than the
    // deadline, and the next batch meets a 503 too: nothing was sent in between, so nothing says
    // the service refused all that time.
    server.mock.faults.add({ match: { operation: 'finance' }, status: 503, times: 1 });
    async function* slowFeed() {
      const [first, ...rest] = financeRecords(10);
      if (first) yield first;
      await new Promise((resolve) => setTimeout(resolve, 600));
      server.mock.faults.add({ match: { operation: 'finance' }, status: 503, times: 1 });
      yield* rest;
    }
    const client = clientFor(server, { maxRetries: 0 });
    const report = await client.finance.publish(server.mock.appId, slowFeed(), {
      batchSize: 1,
      concurrency: 1,
      rateLimitDeadlineMs: 300,
    });
    expect(report.stoppedBy).toBeUndefined();
    expect(report.recordsFailed).toBe(2);
    expect(report.recordsSent).toBe(8);
    expectAccounted(report, 10);
  });

  it('an overloaded service that still accepts batches is not an outage: each accepted batch renews the patience', async () => {
    // Every other request is refused and its batch fails (no retries), for a run several times the
    // deadline long (60 requests held 20 ms each, one at a time): an accepted batch between any
    // two refusals, so the run never goes a deadline without one.
    server.mock.faults.add({ match: { operation: 'finance' }, status: 503, probability: 0.5, random: everyOther() });
    const client = clientFor(server, { maxRetries: 0, fetch: heldBack(20, (url) => url.includes('/finance')) });
    const started = performance.now();
    const report = await client.finance.publish(server.mock.appId, financeRecords(60), {
      batchSize: 1,
      concurrency: 1,
      adaptive: false,
      rateLimitDeadlineMs: 400,
    });
    expect(performance.now() - started).toBeGreaterThan(3 * 400);
    expect(report.stoppedBy).toBeUndefined();
    expect(report.recordsFailed).toBe(30);
    expect(report.recordsSent).toBe(30);
    expectAccounted(report, 60);
  });
});

describe('publish with a rate budget that fails', () => {
  it('a budget whose acquire rejects stops the run with an error naming it, and every record is counted', async () => {
    const client = clientFor(server);
    let calls = 0;
    const budget = budgetWith({
      acquire: async () => {
        calls += 1;
        if (calls === 2) throw new Error('redis down');
      },
    });
    const { error, report } = await rejection(
      client.finance.publish(server.mock.appId, financeRecords(50), {
        batchSize: 10,
        concurrency: 2,
        rateBudget: budget,
      }),
    );
    expect(error.message).toBe("the rateBudget's acquire() failed: redis down");
    expect(report.stoppedBy).toBe(error);
    expect(report.batches.every((batch) => batch !== undefined)).toBe(true);
    expect(report.recordsSent).toBe(server.mock.state.records(server.mock.appId).length);
    expectAccounted(report, 50);
  });

  it('a budget whose release throws stops the run, and nothing is sent after publish rejects', async () => {
    const client = clientFor(server);
    const budget = budgetWith({
      release: () => {
        throw new Error('release failed');
      },
    });
    const { error, report } = await rejection(
      client.finance.publish(server.mock.appId, financeRecords(100), {
        batchSize: 10,
        concurrency: 2,
        rateBudget: budget,
      }),
    );
    expect(error.message).toBe("the rateBudget's release() failed: release failed");
    const storedAtRejection = server.mock.state.records(server.mock.appId).length;
    expect(report.recordsSent).toBe(storedAtRejection);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(server.mock.state.records(server.mock.appId).length).toBe(storedAtRejection);
    expectAccounted(report, 100);
  });

  it('a budget whose onSuccess throws leaves the stored batch sent, never failed (safe to re-send)', async () => {
    const client = clientFor(server);
    const budget = budgetWith({
      onSuccess: () => {
        throw new Error('counter broken');
      },
    });
    const { report } = await rejection(
      client.finance.publish(server.mock.appId, financeRecords(10), { batchSize: 10, rateBudget: budget }),
    );
    expect(report.batches.map((batch) => batch.status)).toEqual(['sent']);
    expect(server.mock.state.records(server.mock.appId)).toHaveLength(10);
  });

  it('a slot a budget grants after the abort is given back, so a shared budget loses none', async () => {
    const client = clientFor(server);
    let held = 0;
    const budget = budgetWith({
      // Ignores the signal, and grants late.
      acquire: () => new Promise<void>((resolve) => setTimeout(resolve, 150)).then(() => void held++),
      release: () => void held--,
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const { error } = await rejection(
      client.finance.publish(server.mock.appId, financeRecords(10), { rateBudget: budget, signal: controller.signal }),
    );
    expect(error).toBeInstanceOf(AbortError);
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(held).toBe(0);
    expect(financeStatuses(server.mock)).toEqual([]);
  });

  it('a budget that never grants a slot, and ignores the signal, still lets an abort end the run', async () => {
    const client = clientFor(server);
    const budget = budgetWith({ acquire: () => new Promise<void>(() => {}) });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const { error, report } = await rejection(
      client.finance.publish(server.mock.appId, financeRecords(20), {
        batchSize: 10,
        rateBudget: budget,
        signal: controller.signal,
      }),
    );
    expect(error).toBeInstanceOf(AbortError);
    expect(financeStatuses(server.mock)).toEqual([]);
    expectAccounted(report, 20);
  });
});
