/**
 * One connection of a publish or an upload stalls for 20 s over a far path: the proxy stops
 * carrying one direction of it without closing it (bench/net/link.ts, `stall`). The run must end
 * in bounded time, the stalled batch or file must be retried or reported as what it may be, and
 * nothing may be reported `sent` that the service did not store.
 */
import { DEMO_APP_ID } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import type { ConnectionFaults } from '../../bench/net/delay-proxy.js';
import { timesStored } from '../support/accounting.js';
import { clientFor } from '../support/clients.js';
import { useFarEmulator } from '../support/far-emulator.js';
import { financeRecord } from '../support/records.js';

const startFar = useFarEmulator();
const STALL_MS = 20_000;

/** The third connection: not the token's first one, a data connection of the first round. */
const STALLED_CONNECTION = 2;

const ANSWER: ConnectionFaults = { down: { kind: 'stall', afterBytes: 0, forMs: STALL_MS } };

function stallOn(faults: ConnectionFaults): (connection: number) => ConnectionFaults | undefined {
  return (connection) => (connection === STALLED_CONNECTION ? faults : undefined);
}

describe('a publish with one connection stalled for 20 s', () => {
  it.each([
    ['the answer', 2_000, ANSWER],
    ['the request body', 2_000, { up: { kind: 'stall', afterBytes: 3_000, forMs: STALL_MS } } as const],
    ['the answer', undefined, ANSWER],
  ])(
    '%s stalled, timeoutMs %s: ends in bounded time; sent means stored once',
    async (what, timeoutMs, faults) => {
      const { emulator, proxy } = await startFar({ oneWayDelayMs: 50, faultFor: stallOn(faults) });
      const client = clientFor(emulator, timeoutMs === undefined ? {} : { timeoutMs });
      const records = Array.from({ length: 2000 }, (_, i) => financeRecord(i));
      const started = performance.now();
      const report = await client.finance.publish(DEMO_APP_ID, records, { batchSize: 50 });
      const elapsed = performance.now() - started;
      expect(proxy.stats().faultsStruck).toBe(1);
      const stored = timesStored(emulator.mock.state.records(DEMO_APP_ID));
      for (const batch of report.batches) {
        const expected = batch.status === 'sent' ? [1] : batch.status === 'failed' ? [0] : [0, 1];
        for (let i = batch.firstRecord; i <= batch.lastRecord; i++) {
          expect(expected, `record ${i} of ${batch.status} batch ${batch.index}`).toContain(stored.get(`tx-${i}`) ?? 0);
        }
      }
      expect(report.recordsSent + report.recordsFailed + report.recordsUnknown).toBe(2000);
      console.info(
        `stall of ${what} (timeoutMs ${timeoutMs ?? 'default'}): sent ${report.recordsSent}, ` +
          `unknown ${report.recordsUnknown}, failed ${report.recordsFailed} in ${Math.round(elapsed)} ms`,
      );
      if (timeoutMs === undefined) {
        // 20 s is within the default 30 s: the answer comes, late, and every batch is sent.
        expect(report.recordsSent).toBe(2000);
        expect(elapsed).toBeLessThan(STALL_MS + 5_000);
      } else {
        // The stalled batch ran out of time: unknown (the service may hold it), never sent again.
        expect(report.recordsUnknown).toBe(50);
        expect(elapsed).toBeLessThan(STALL_MS / 2);
      }
    },
    60_000,
  );
});

describe('an upload with one connection stalled for 20 s', () => {
  it.each([
    ['the answer', 2_000, ANSWER],
    ['the request body', 2_000, { up: { kind: 'stall', afterBytes: 100_000, forMs: STALL_MS } } as const],
    ['the answer', undefined, ANSWER],
  ])(
    '%s stalled, timeoutMs %s: every file uploaded, in bounded time',
    async (what, timeoutMs, faults) => {
      const { emulator, proxy } = await startFar({ oneWayDelayMs: 50, faultFor: stallOn(faults) });
      const client = clientFor(emulator, timeoutMs === undefined ? {} : { timeoutMs });
      const files = Array.from({ length: 12 }, (_, i) => ({ name: `f${i}.csv`, data: Buffer.alloc(300_000, i) }));
      const started = performance.now();
      const report = await client.uploads.upload(DEMO_APP_ID, files);
      const elapsed = performance.now() - started;
      expect(proxy.stats().faultsStruck).toBe(1);
      console.info(
        `upload stall of ${what} (timeoutMs ${timeoutMs ?? 'default'}): ${report.filesUploaded} uploaded ` +
          `in ${Math.round(elapsed)} ms, ${report.files.reduce((sum, file) => sum + file.attempts, 0)} PUTs`,
      );
      expect(report.filesUploaded).toBe(12);
      for (const file of files) {
        const held = emulator.mock.state.file(DEMO_APP_ID, file.name)?.bytes;
        expect(held !== undefined && Buffer.from(held).equals(file.data), file.name).toBe(true);
      }
      // A PUT that ran out of time is sent again; with the default timeout the late answer comes.
      expect(elapsed).toBeLessThan(timeoutMs === undefined ? STALL_MS + 5_000 : STALL_MS / 2);
    },
    60_000,
  );
});
