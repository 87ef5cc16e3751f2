import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEMO_APP_ID, seededRandom } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { type Range, RangeSet } from '../../src/cli/ranges.js';
import { useCliFixture } from '../support/cli/emulator.js';
import { emulatorEnv, startCli } from '../support/cli/run.js';

/**
 * `finance publish --checkpoint` killed at random moments (mostly SIGKILL, sometimes SIGTERM) and
 * run again, over and over, against the HTTP emulator with latency, retried 503s and 429s. After every
 * kill the checkpoint must account for every record the service holds, and the records it leaves
 * unknown must be at most the batches in flight (concurrency x batch size). At the end every valid
 * row is stored exactly once unless it was reported unknown (then at most once), every invalid row
 * is in the rejects file, and no row is missing from the report.
 */

const ctx = useCliFixture();

const SEED = Number(process.env.KILL_RESUME_SEED ?? 20_260_521);
const ROWS = 2500;
const BATCH_SIZE = 25;
const CONCURRENCY = 3;
const KILL_CYCLES = 12;
const FIRST_CREATED = 1704067200000;

/**
 * Rows whose records all have the same size on the wire, so that batches closed by the byte limit
 * all hold the same number of records. Every 50th row is invalid (an amount that is not a number).
 */
function fixedWidthCsv(rows: number): { text: string; invalidRows: Set<number> } {
  const lines = ['created,amount,currency,identifier,type,vendor,description'];
  const invalidRows = new Set<number>();
  for (let row = 0; row < rows; row++) {
    const id = String(row).padStart(6, '0');
    const invalid = row % 50 === 7;
    if (invalid) invalidRows.add(row);
    lines.push(
      `${FIRST_CREATED + row},${invalid ? 'not-a-num' : '12.25'},USD,user${id}@example.com,expense,Vendor,row ${id}`,
    );
  }
  return { text: `${lines.join('\n')}\n`, invalidRows };
}

interface CheckpointView {
  delivered: RangeSet;
  unknown: RangeSet;
  /** Reserved for a request and never settled: what the kill left unknown. */
  unsettled: RangeSet;
}

function readCheckpoint(path: string): CheckpointView | undefined {
  if (!existsSync(path)) return undefined;
  const file = JSON.parse(readFileSync(path, 'utf8')) as Record<string, Range[]> & { handedOffThrough?: number };
  const delivered = new RangeSet(file.delivered ?? []);
  const unknown = new RangeSet(file.unknown ?? []);
  const settled = delivered.union(new RangeSet(file.failed ?? [])).union(unknown);
  // Older checkpoints marked a prefix of reserved records instead of the batches in flight.
  const reserved = new RangeSet(file.inFlight ?? []).union(new RangeSet().complementUpTo(file.handedOffThrough ?? 0));
  return { delivered, unknown, unsettled: reserved.difference(settled) };
}

describe('push-api finance publish killed at random moments and resumed', () => {
  it.each([
    ['batches closed by count', undefined],
    ['batches closed by bytes', 2048],
  ] as const)(
    '%s: each row stored exactly once unless reported unknown, unknown rows per kill within the batches in flight',
    async (_, maxBatchBytes) => {
      const random = seededRandom(SEED + (maxBatchBytes ?? 0));
      const { text, invalidRows } = fixedWidthCsv(ROWS);
      writeFileSync(ctx.temp.path('in.csv'), text);
      // The checkpoint numbers valid records: ordinal k is the k-th valid row.
      const validRows = [...Array(ROWS).keys()].filter((row) => !invalidRows.has(row));

      const { mock } = ctx.emulator;
      // The first rule that matches a request answers it: the occasional 503 and 429 come first,
      // and every other batch meets the latency.
      const unavailable = mock.faults.add({
        match: { operation: 'finance' },
        status: 503,
        probability: 0.08,
        random: seededRandom(SEED + 1),
      });
      // 429s shrink the client's window: workers then hold batches read ahead while they wait for a slot.
      const limited = mock.faults.add({
        match: { operation: 'finance' },
        status: 429,
        probability: 0.06,
        random: seededRandom(SEED + 2),
      });
      mock.faults.add({ match: { operation: 'finance' }, delayMs: 60, times: Infinity });
      const storedRows = (): number[] =>
        mock.state.records(DEMO_APP_ID).map((record) => Number(record.created) - FIRST_CREATED);

      const checkpoint = ctx.temp.path('cp.json');
      const rejects = ctx.temp.path('rejects.jsonl');
      const args = [
        'finance',
        'publish',
        '--app',
        DEMO_APP_ID,
        '--batch-size',
        String(BATCH_SIZE),
        '--concurrency',
        String(CONCURRENCY),
        ...(maxBatchBytes === undefined ? [] : ['--max-batch-bytes', String(maxBatchBytes)]),
        '--json',
        '--checkpoint',
        checkpoint,
        '--rejects',
        rejects,
        ctx.temp.path('in.csv'),
      ];

      // The records of one batch: the count limit, or what the byte limit lets in (every record has
      // the same size, so every batch the service received but the last holds the same number).
      const recordsPerBatch = (): number => {
        if (maxBatchBytes === undefined) return BATCH_SIZE;
        const sizes = mock.state.deliveries(DEMO_APP_ID).map((delivery) => delivery.count);
        const most = Math.max(0, ...sizes);
        expect(most).toBeLessThan(BATCH_SIZE);
        return most;
      };
      const unknownPerKill: number[] = [];
      let bound = CONCURRENCY * BATCH_SIZE;
      let unknownSoFar = 0;
      let finished: Record<string, unknown> | undefined;
      for (let cycle = 0; cycle <= KILL_CYCLES && finished === undefined; cycle++) {
        const last = cycle === KILL_CYCLES;
        const signal: NodeJS.Signals = random() < 0.75 ? 'SIGKILL' : 'SIGTERM';
        const checkpointBefore = existsSync(checkpoint) ? readFileSync(checkpoint, 'utf8') : undefined;
        const run = startCli(ctx.cli, args, { env: emulatorEnv(ctx.emulator), timeoutMs: 30_000 });
        let exited = false;
        void run.done.then(() => (exited = true));
        if (!last) {
          // Half the kills at a random time, half once the service has stored some more records.
          if (random() < 0.5) await sleep(Math.floor(random() * 1200));
          else {
            const target = storedRows().length + Math.floor(random() * 300);
            const deadline = Date.now() + 5000;
            while (storedRows().length < target && !exited && Date.now() < deadline) await sleep(2);
          }
          run.child.kill(signal);
        }
        const result = await run.done;
        const context = `seed ${SEED}, cycle ${cycle}, ${last ? 'no kill' : signal}`;
        if (mock.state.recordCount(DEMO_APP_ID) > 0) bound = CONCURRENCY * recordsPerBatch();
        const stored = storedRows();
        expect(new Set(stored).size, `a row stored twice (${context})`).toBe(stored.length);

        const view = readCheckpoint(checkpoint);
        if (view !== undefined) {
          // Every row the service holds is known to the checkpoint: delivered, unknown, or in flight
          // at the kill. A row outside these would be sent again by the next run.
          for (const row of stored) {
            const ordinal = validRows.indexOf(row);
            const accounted = view.delivered.has(ordinal) || view.unknown.has(ordinal) || view.unsettled.has(ordinal);
            expect(accounted, `row ${row} stored but unaccounted (${context})`).toBe(true);
          }
          expect(view.unsettled.size(), `unknown rows left by the kill (${context})`).toBeLessThanOrEqual(bound);
          if (result.signal === 'SIGKILL') unknownPerKill.push(view.unsettled.size());
          // A run that was not killed settles every batch it started. One stopped before it opened the
          // checkpoint (a signal during start-up) leaves it as the last kill left it.
          const untouched = readFileSync(checkpoint, 'utf8') === checkpointBefore;
          if (result.signal === null && !untouched) expect(view.unsettled.size(), context).toBe(0);
        }

        if (result.signal === null) {
          const objects = result.stdout.split('\n').filter((line) => line.length > 0);
          expect(objects, context).toHaveLength(1);
          const report = JSON.parse(objects[0] as string) as Record<string, unknown>;
          expect(report.exitCode, context).toBe(result.code);
          if (report.inputComplete === true && report.interrupted === false) finished = report;
          else expect(result.code, `${context}: ${result.stderr}`).toBe(130);
        }
        const unknownNow = view === undefined ? 0 : view.unknown.union(view.unsettled).size();
        expect(unknownNow - unknownSoFar, context).toBeLessThanOrEqual(bound);
        unknownSoFar = unknownNow;
      }

      // The last cycle is never killed, so the run has finished.
      expect(finished).toBeDefined();
      const report = finished as Record<
        'recordsSkipped' | 'recordsSent' | 'recordsUnknown' | 'recordsInvalid' | 'recordsFailed',
        number
      >;
      const unknownRows = new Set<number>();
      const invalidInRejects = new Set<number>();
      for (const line of readFileSync(rejects, 'utf8').split('\n').filter(Boolean)) {
        const entry = JSON.parse(line) as { kind: string; line: number };
        // Line 1 is the header: row r is on line r + 2.
        if (entry.kind === 'unknown') unknownRows.add(entry.line - 2);
        else if (entry.kind === 'invalid') invalidInRejects.add(entry.line - 2);
        else throw new Error(`unexpected rejects entry ${line}`);
      }
      expect([...invalidInRejects].sort((a, b) => a - b)).toEqual([...invalidRows].sort((a, b) => a - b));
      expect(unknownRows.size).toBe(unknownSoFar);
      expect(report.recordsUnknown).toBe(unknownRows.size);
      expect(report.recordsFailed).toBe(0);

      const stored = storedRows();
      const storedSet = new Set(stored);
      expect(storedSet.size).toBe(stored.length);
      for (const row of validRows) {
        if (!unknownRows.has(row)) expect(storedSet.has(row), `row ${row} never stored`).toBe(true);
      }
      for (const row of stored) expect(invalidRows.has(row), `invalid row ${row} stored`).toBe(false);
      // Every row is accounted for in the last report: delivered before, sent now, unknown or invalid.
      expect(report.recordsSkipped + report.recordsSent + report.recordsUnknown + report.recordsInvalid).toBe(ROWS);
      expect(report.recordsSkipped + report.recordsSent).toBe(
        stored.length - [...unknownRows].filter((row) => storedSet.has(row)).length,
      );

      const kills = unknownPerKill.length;
      console.info(
        `kill-resume seed ${SEED}: ${kills} SIGKILLs, unknown rows per kill max ${Math.max(0, ...unknownPerKill)} ` +
          `(bound ${bound}), total unknown ${unknownSoFar} of ${validRows.length} valid rows; ` +
          `${unavailable.hits} 503s and ${limited.hits} 429s`,
      );
      expect(kills).toBeGreaterThan(0);
      // The runs met the faults they were meant to: retried 503s and 429s.
      expect(unavailable.hits).toBeGreaterThan(0);
      expect(limited.hits).toBeGreaterThan(0);
    },
    90_000,
  );
});
