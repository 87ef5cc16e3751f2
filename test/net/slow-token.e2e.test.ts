/**
 * A publish over a far path whose token answers are slow: the token endpoint takes seconds, or
 * its answer is held on the way while the token's lifetime already runs at the service. Tokens
 * live a few seconds, so they expire mid-run. One refresh at a time, no request sent with a token
 * the client could know was dead, and every batch sent.
 */
import { DEMO_APP_ID } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { useFarEmulator } from '../support/far-emulator.js';
import { financeRecord } from '../support/records.js';

const startFar = useFarEmulator();

describe('a publish whose tokens expire mid-run over a far path with a slow token endpoint', () => {
  it('a token answer held 2 s on the way: its lifetime is counted from the request, no request meets a 401', async () => {
    const { emulator, proxy } = await startFar({
      oneWayDelayMs: 40,
      emulator: { tokenTtlSeconds: 4 },
      // The first connection carries the first token request: its answer is held 2 s after the service issued it.
      faultFor: (connection) =>
        connection === 0 ? { down: { kind: 'stall', afterBytes: 0, forMs: 2_000 } } : undefined,
    });
    emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 100, times: Infinity });
    const statuses: number[] = [];
    let refreshes = 0;
    const client = clientFor(emulator, {
      hooks: {
        response: (event) => {
          if (event.operation === 'finance' && event.status !== undefined) statuses.push(event.status);
        },
        tokenRefresh: () => refreshes++,
      },
    });
    const records = Array.from({ length: 5000 }, (_, i) => financeRecord(i));
    const report = await client.finance.publish(DEMO_APP_ID, records, { batchSize: 20 });
    expect(proxy.stats().faultsStruck).toBe(1);
    console.info(
      `slow token: ${refreshes} refreshes, ${statuses.filter((s) => s === 401).length} 401s of ${statuses.length} in ${report.durationMs} ms`,
    );
    expect(report.recordsSent).toBe(5000);
    expect(statuses.filter((status) => status === 401)).toEqual([]);
  }, 60_000);

  it('a token endpoint that takes 1.5 s for tokens of 3 s: one refresh at a time, none sent with a dead token', async () => {
    const { emulator } = await startFar({ oneWayDelayMs: 40, emulator: { tokenTtlSeconds: 3 } });
    emulator.mock.faults.add({ match: { operation: 'token' }, delayMs: 1_500, times: Infinity });
    emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 100, times: Infinity });
    const unauthorized: number[] = [];
    let refreshing = 0;
    let mostRefreshing = 0;
    const client = clientFor(emulator, {
      hooks: {
        request: (event) => {
          if (event.operation !== 'token') return;
          refreshing++;
          mostRefreshing = Math.max(mostRefreshing, refreshing);
        },
        response: (event) => {
          if (event.operation === 'token') refreshing--;
          else if (event.status === 401) unauthorized.push(event.callId);
        },
      },
    });
    const records = Array.from({ length: 2400 }, (_, i) => financeRecord(i));
    const report = await client.finance.publish(DEMO_APP_ID, records, {
      batchSize: 20,
      concurrency: 8,
      adaptive: false,
    });
    const tokenRequests = emulator.mock.state.requests.filter((request) => request.operation === 'token').length;
    console.info(
      `slow token endpoint: ${tokenRequests} token requests, ${unauthorized.length} 401s in ${report.durationMs} ms`,
    );
    expect(report.recordsSent).toBe(2400);
    expect(mostRefreshing).toBe(1);
    expect(unauthorized).toEqual([]);
    // A token is asked for at most once per 2.7 s of its 3 s (the 10% margin), and the first at the start.
    expect(tokenRequests).toBeLessThanOrEqual(Math.ceil(report.durationMs / 2_700) + 1);
  }, 60_000);

  it('a token request stalled 20 s mid-run, timeoutMs 2 s: it is sent again, and the run ends well before the stall', async () => {
    const { emulator } = await startFar({ oneWayDelayMs: 40, emulator: { tokenTtlSeconds: 2 } });
    emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 100, times: Infinity });
    const client = clientFor(emulator, { timeoutMs: 2_000 });
    let stall: { hits: number } | undefined;
    const records = Array.from({ length: 2000 }, (_, i) => financeRecord(i));
    const report = await client.finance.publish(DEMO_APP_ID, records, {
      batchSize: 20,
      concurrency: 4,
      adaptive: false,
      // Once the first token is in use, the next token request is answered only after 20 s.
      onBatchSettled: () => {
        stall ??= emulator.mock.faults.add({ match: { operation: 'token' }, delayMs: 20_000, times: 1 });
      },
    });
    expect(stall?.hits).toBe(1);
    console.info(`stalled token request: sent ${report.recordsSent} in ${report.durationMs} ms`);
    expect(report.recordsSent).toBe(2000);
    expect(report.durationMs).toBeLessThan(20_000);
  }, 60_000);

  it.each([
    ['its request', { up: { kind: 'reset', afterBytes: 100 } }],
    ['its answer', { down: { kind: 'reset', afterBytes: 60 } }],
  ] as const)(
    'a token request whose connection resets in %s is sent again: every batch sent',
    async (_, faults) => {
      const { emulator, proxy } = await startFar({
        oneWayDelayMs: 40,
        faultFor: (connection) => (connection === 0 ? faults : undefined),
      });
      let tokenRequests = 0;
      const client = clientFor(emulator, {
        hooks: {
          request: (event) => {
            if (event.operation === 'token') tokenRequests++;
          },
        },
      });
      const records = Array.from({ length: 500 }, (_, i) => financeRecord(i));
      const report = await client.finance.publish(DEMO_APP_ID, records, { batchSize: 50 });
      expect(proxy.stats().faultsStruck).toBe(1);
      expect({ sent: report.recordsSent, tokenRequests }).toEqual({ sent: 500, tokenRequests: 2 });
      expect(emulator.mock.state.recordCount(DEMO_APP_ID)).toBe(500);
    },
    30_000,
  );
});
