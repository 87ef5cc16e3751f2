/** Assertions on a publish run's accounting, and on what the emulator answered. */
import type { FinanceRecord, PublishReport } from 'push-api-client';
import type { PushApiEmulator } from 'push-api-client/testing';

/**
 * The invariant every report keeps: each record is counted exactly once. `expected` is the number
 * of input records for an array (records never read are counted too, in `recordsNotRead`), and
 * the number of records read for any other input.
 */
export function expectAccounted(report: PublishReport, expected: number): void {
  const total =
    report.recordsSent + report.recordsInvalid + report.recordsFailed + report.recordsUnknown + report.recordsNotRead;
  if (total !== expected) {
    throw new Error(
      `accounting broken: read ${report.recordsRead}, not read ${report.recordsNotRead}, counted ${total}, expected ${expected}`,
    );
  }
  const inBatches = report.batches.reduce((sum, batch) => sum + batch.recordCount, 0);
  if (inBatches + report.recordsInvalid + report.recordsNotRead !== expected) {
    throw new Error(`batches hold ${inBatches} records and ${report.invalid.length} are invalid, expected ${expected}`);
  }
}

/** Finance requests the emulator answered, by status. */
export function financeStatuses(emulator: PushApiEmulator): number[] {
  return emulator.state.requests.filter((r) => r.operation === 'finance').map((r) => r.status);
}

/** How many times the service stored each record, by its `transactionNumber`: a record sent twice counts 2. */
export function timesStored(records: readonly FinanceRecord[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const record of records) {
    const key = String(record.transactionNumber);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}
