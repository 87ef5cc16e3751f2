/**
 * A publish over a slow uplink that all its requests share (a TCP proxy on 127.0.0.1 in front
 * of the emulator): the first round goes out before any answer says what the link carries, so it
 * must be small enough to cross it well within the attempt timeout. A first round of the whole
 * window would share the link until every request ran out of time: batches the service stored
 * reported `unknown`, where a plain script at 4 in flight sends them all.
 */

import type { ConcurrencyHookEvent } from 'push-api-client';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { financeRecord } from '../support/records.js';
import { useSharedUplink } from '../support/shared-uplink.js';

const startUplink = useSharedUplink();
let emulator: RunningEmulator | undefined;
afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

/** 200 kB/s up, 2 s per attempt: the first round may hold 125 kB (a 2 Mbit/s uplink's quarter timeout). */
const BYTES_PER_SECOND = 200_000;
const TIMEOUT_MS = 2_000;

async function slowUplink() {
  const uplink = await startUplink(BYTES_PER_SECOND);
  emulator = await startEmulator({ publicUrl: uplink.url });
  uplink.forwardTo(Number(new URL(emulator.listenUrl).port));
  const events: ConcurrencyHookEvent[] = [];
  // Its addresses are the proxy's (publicUrl): the token, the batches and the PUTs all cross the uplink.
  const client = clientFor(emulator, { timeoutMs: TIMEOUT_MS, hooks: { concurrency: (event) => events.push(event) } });
  return { emulator, client, events };
}

describe("a publish's first round over a slow shared uplink", () => {
  it('publishes batches of 60 kB in a first round the link carries within the timeout: every record sent, none unknown', async () => {
    const { emulator, client, events } = await slowUplink();
    // 10 batches of about 60 kB: 8 at once (480 kB) take 2.4 s to cross, past the 2 s timeout.
    const records = Array.from({ length: 1000 }, (_, i) =>
      financeRecord(i, { transactionNumber: `t-${i}`, description: 'x'.repeat(500) }),
    );
    const report = await client.finance.publish('demo-app', records, { batchSize: 100 });
    expect({ sent: report.recordsSent, unknown: report.recordsUnknown, failed: report.recordsFailed }).toEqual({
      sent: 1000,
      unknown: 0,
      failed: 0,
    });
    const stored = emulator.mock.state.records('demo-app').map((record) => record.transactionNumber);
    expect(stored.length).toBe(1000);
    expect(new Set(stored).size).toBe(1000);
    // 125 kB hold two such batches at most.
    const fitted = events.find((event) => event.reason === 'size');
    expect(fitted?.previous).toBe(8);
    expect(fitted?.limit).toBeLessThanOrEqual(2);
  }, 30_000);
});
