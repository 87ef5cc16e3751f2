import pg from 'pg';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { financeRecordsFromTable, publishTable, seedExpenses } from '../../examples/postgres-to-finance.js';
import { clientFor } from '../support/clients.js';
import { PG_URL } from './env.js';

const ROWS = 20_000;
const table = `expenses_it_${process.pid}`;
const db = new pg.Client({ connectionString: PG_URL });
let emulator: RunningEmulator;

beforeAll(async () => {
  await db.connect();
  await db.query(`DROP TABLE IF EXISTS ${db.escapeIdentifier(table)}`);
  await seedExpenses(db, table, ROWS);
  emulator = await startEmulator();
});

afterAll(async () => {
  await emulator?.close();
  await db.query(`DROP TABLE IF EXISTS ${db.escapeIdentifier(table)}`);
  await db.end();
});

describe('postgres-to-finance recipe (real PostgreSQL)', () => {
  it('delivers every row of a 20,000-row table to the service exactly once', async () => {
    emulator.mock.reset();
    const report = await publishTable(db, clientFor(emulator), emulator.mock.appId, table);

    expect(report.recordsSent).toBe(ROWS);
    expect(report.recordsFailed + report.recordsUnknown + report.recordsInvalid).toBe(0);
    const received = emulator.mock.state.records(emulator.mock.appId);
    expect(received).toHaveLength(ROWS);
    const numbers = new Set(received.map((record) => record.transactionNumber));
    expect(numbers.size).toBe(ROWS);
    for (let id = 1; id <= ROWS; id += 1) expect(numbers.has(`expense-${id}`)).toBe(true);
    const first = received.find((record) => record.transactionNumber === 'expense-1');
    expect(first).toMatchObject({
      created: Date.UTC(2025, 0, 1, 0, 1),
      amount: 11.37,
      currency: 'USD',
      identifier: 'user1@example.com',
      type: 'expense',
      vendor: 'Globex',
      category: 'Software:SaaS',
    });
  });

  it('reads rows only as fast as batches are sent (bounded read-ahead)', async () => {
    emulator.mock.reset();
    // A slow service: an unbounded reader would pull the whole table while the first batches wait.
    emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 20, times: Infinity });
    const batchSize = 500;
    const concurrency = 2;
    let read = 0;
    let settled = 0;
    let maxAhead = 0;
    async function* counted() {
      for await (const record of financeRecordsFromTable(db, table, { batchSize })) {
        read += 1;
        maxAhead = Math.max(maxAhead, read - settled);
        yield record;
      }
    }
    const report = await clientFor(emulator).finance.publish(emulator.mock.appId, counted(), {
      batchSize,
      concurrency,
      adaptive: false,
      onProgress: (progress) => {
        settled = progress.recordsSent + progress.recordsFailed + progress.recordsUnknown;
      },
    });

    expect(report.recordsSent).toBe(ROWS);
    expect(emulator.mock.state.recordCount(emulator.mock.appId)).toBe(ROWS);
    // In flight: `concurrency` batches, plus the one being assembled.
    expect(maxAhead).toBeLessThanOrEqual((concurrency + 1) * batchSize);
  });
});
