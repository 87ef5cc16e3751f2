/**
 * Publishes and uploads over a far path (50–150 ms round trips, bench/net/delay-proxy.ts) on
 * which a seeded few connections are reset mid-request or mid-answer. The outcomes must stay
 * honest: a batch is `sent` only when the service stored it, once; `failed` only when it stored
 * nothing; `unknown` at most once; no record stored twice; every record in one bucket; a file
 * `uploaded` only when the service holds its bytes.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import { DEMO_APP_ID, seededRandom } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import type { ConnectionFaults } from '../../bench/net/delay-proxy.js';
import { timesStored } from '../support/accounting.js';
import { clientFor } from '../support/clients.js';
import { useFarEmulator } from '../support/far-emulator.js';
import { financeRecord } from '../support/records.js';

const startFar = useFarEmulator();
const SEED = Number(process.env.NET_SEED ?? 20_261_128);
const RUNS = 4;

/**
 * Closes the proxy's connections and lets the client hear of it: pooled connections closed in the
 * very turn a run starts would be written to before their FIN is read, a race of this one process.
 */
async function coldStart(proxy: { reset(): void }): Promise<void> {
  proxy.reset();
  await sleep(100);
}

/**
 * A seeded `rate` of connections reset: half in the request (before `upBytes`), half in the
 * answer's first 400 bytes. The sixth connection of each run always resets 2 kB into what it
 * carries, so that every run meets at least one reset, whatever the seed.
 */
function resets(seed: number, rate: number, upBytes: number): (connection: number) => ConnectionFaults | undefined {
  const random = seededRandom(seed);
  return (connection) => {
    if (connection === 5) return { up: { kind: 'reset', afterBytes: 2_000 } };
    if (random() >= rate) return undefined;
    return random() < 0.5
      ? { up: { kind: 'reset', afterBytes: Math.floor(random() * upBytes) } }
      : { down: { kind: 'reset', afterBytes: Math.floor(random() * 400) } };
  };
}

describe('publishes whose connections reset at random over a far path', () => {
  it.each([
    [25, 0.05],
    [75, 0.03],
  ])(
    'one way %i ms, a share %f of connections reset: every record in one honest bucket, none stored twice',
    async (oneWay, rate) => {
      const { emulator, proxy } = await startFar({
        oneWayDelayMs: oneWay,
        faultFor: resets(SEED + oneWay, rate, 30_000),
      });
      const client = clientFor(emulator, { timeoutMs: 5_000 });
      const tally = { sent: 0, failed: 0, unknown: 0, struck: 0, connections: 0 };
      // Several runs, each on cold connections, so that a few per cent of them is a few resets.
      for (let run = 0; run < RUNS; run++) {
        await coldStart(proxy);
        emulator.mock.reset();
        const records = Array.from({ length: 2000 }, (_, i) => financeRecord(i));
        const report = await client.finance.publish(DEMO_APP_ID, records, { batchSize: 50 });
        const stored = timesStored(emulator.mock.state.records(DEMO_APP_ID));
        expect([...stored].filter(([, count]) => count > 1)).toEqual([]);
        for (const batch of report.batches) {
          const expected = batch.status === 'sent' ? [1] : batch.status === 'failed' ? [0] : [0, 1];
          for (let i = batch.firstRecord; i <= batch.lastRecord; i++) {
            expect(expected, `run ${run}, record ${i} of ${batch.status} batch ${batch.index}`).toContain(
              stored.get(`tx-${i}`) ?? 0,
            );
          }
        }
        expect(report.recordsSent + report.recordsInvalid + report.recordsFailed + report.recordsUnknown).toBe(2000);
        const stats = proxy.stats();
        tally.sent += report.recordsSent;
        tally.failed += report.recordsFailed;
        tally.unknown += report.recordsUnknown;
        tally.struck += stats.faultsStruck;
        tally.connections += stats.connections;
      }
      console.info(`publish resets (seed ${SEED}, ${oneWay} ms one way): ${JSON.stringify(tally)}`);
      expect(tally.struck).toBeGreaterThan(0);
      // A reset costs the batch on its connection, no more: nothing else is left unknown.
      expect(tally.unknown).toBeLessThanOrEqual(tally.struck * 50);
    },
    60_000,
  );
});

describe('a publish with retryAmbiguous whose connections reset at random over a far path', () => {
  it('sent is stored once, storedAtLeastOnce at least once, failed never, and nothing more than twice', async () => {
    const { emulator, proxy } = await startFar({ oneWayDelayMs: 50, faultFor: resets(SEED + 1, 0.05, 30_000) });
    const client = clientFor(emulator, { timeoutMs: 5_000, retryAmbiguous: true });
    const tally = { sent: 0, unknown: 0, atLeastOnce: 0, struck: 0 };
    for (let run = 0; run < RUNS; run++) {
      await coldStart(proxy);
      emulator.mock.reset();
      const records = Array.from({ length: 2000 }, (_, i) => financeRecord(i));
      const report = await client.finance.publish(DEMO_APP_ID, records, { batchSize: 50 });
      const stored = timesStored(emulator.mock.state.records(DEMO_APP_ID));
      for (const batch of report.batches) {
        const expected =
          batch.status === 'sent'
            ? [1]
            : batch.status === 'failed'
              ? [0]
              : batch.storedAtLeastOnce
                ? [1, 2]
                : [0, 1, 2];
        for (let i = batch.firstRecord; i <= batch.lastRecord; i++) {
          expect(expected, `run ${run}, record ${i} of ${batch.status} batch ${batch.index}`).toContain(
            stored.get(`tx-${i}`) ?? 0,
          );
        }
        if (batch.storedAtLeastOnce) tally.atLeastOnce++;
      }
      tally.sent += report.recordsSent;
      tally.unknown += report.recordsUnknown;
      tally.struck += proxy.stats().faultsStruck;
    }
    console.info(`publish resets with retryAmbiguous (seed ${SEED}): ${JSON.stringify(tally)}`);
    expect(tally.struck).toBeGreaterThan(0);
  }, 60_000);
});

describe('uploads whose connections reset at random over a far path', () => {
  it('one way 50 ms, 5 % of connections reset: every file uploaded, its bytes whole', async () => {
    const { emulator, proxy } = await startFar({ oneWayDelayMs: 50, faultFor: resets(SEED, 0.05, 200_000) });
    const client = clientFor(emulator, { timeoutMs: 5_000 });
    const tally = { uploaded: 0, failed: 0, struck: 0, connections: 0, attempts: 0 };
    for (let run = 0; run < RUNS; run++) {
      await coldStart(proxy);
      const files = Array.from({ length: 16 }, (_, i) => ({
        name: `r${run}-${i}.csv`,
        data: Buffer.alloc(150_000, i),
      }));
      const report = await client.uploads.upload(DEMO_APP_ID, files);
      for (const [i, result] of report.files.entries()) {
        const held = emulator.mock.state.file(DEMO_APP_ID, result.name)?.bytes;
        if (result.status === 'uploaded') {
          expect(held !== undefined && Buffer.from(held).equals(files[i]?.data as Buffer), result.name).toBe(true);
        }
      }
      const stats = proxy.stats();
      tally.uploaded += report.filesUploaded;
      tally.failed += report.filesFailed;
      tally.struck += stats.faultsStruck;
      tally.connections += stats.connections;
      tally.attempts += report.files.reduce((sum, file) => sum + file.attempts, 0);
    }
    console.info(`upload resets (seed ${SEED}): ${JSON.stringify(tally)}`);
    // A PUT is idempotent: a reset one is sent again, within its retries.
    expect(tally.uploaded).toBe(RUNS * 16);
    expect(tally.struck).toBeGreaterThan(0);
  }, 60_000);
});
