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
});
