/**
 * `push-api finance publish --checkpoint` over a far path (50–150 ms round trips, a seeded few
 * connections reset), killed with SIGKILL at seeded moments (while the token is on its way,
 * mid-batch, while the checkpoint is written) and run again until a run ends by itself. Each valid
 * row is stored exactly once unless a run reported it unknown (then at most once), no row is ever
 * stored twice, and the last report's counts add up to the input. Also a run paused (SIGSTOP) while
 * its token ends at the service, woken and killed, then resumed with other batch settings.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEMO_APP_ID, seededRandom } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { type Range, RangeSet } from '../../src/cli/ranges.js';
import { useBuiltCli } from '../support/cli/emulator.js';
import { emulatorEnv, startCli } from '../support/cli/run.js';
import { useFarEmulator } from '../support/far-emulator.js';

const startFar = useFarEmulator();
const SEED = Number(process.env.NET_SEED ?? 20_261_128);
const ROWS = 3000;
const FIRST_CREATED = 1704067200000;
const KILLS = 8;

const built = useBuiltCli();
const { temp } = built;

type Counts = Record<'recordsSkipped' | 'recordsSent' | 'recordsUnknown' | 'recordsInvalid' | 'recordsFailed', number>;

/** Every 40th row is invalid (an amount that is not a number). */
function csv(rows: number): { text: string; invalidRows: Set<number> } {
  const lines = ['created,amount,currency,identifier,type,vendor,description'];
  const invalidRows = new Set<number>();
  for (let row = 0; row < rows; row++) {
    const invalid = row % 40 === 11;
    if (invalid) invalidRows.add(row);
    lines.push(
      `${FIRST_CREATED + row},${invalid ? 'n/a' : '3.5'},USD,user${row}@example.com,expense,Vendor,row ${row}`,
    );
  }
  return { text: `${lines.join('\n')}\n`, invalidRows };
}

/** The checkpoint's rows (valid-record ordinals) that the service may hold: delivered, unknown, or in flight. */
function accountedFor(path: string): RangeSet {
  if (!existsSync(path)) return new RangeSet();
  const file = JSON.parse(readFileSync(path, 'utf8')) as Record<string, Range[]>;
  return new RangeSet(file.delivered ?? [])
    .union(new RangeSet(file.unknown ?? []))
    .union(new RangeSet(file.inFlight ?? []));
}

describe('push-api finance publish --checkpoint over a far path, killed and resumed', () => {
  it.each([25, 75])(
    'one way %i ms: no row stored twice, every row stored once or reported unknown',
    async (oneWay) => {
      const random = seededRandom(SEED + oneWay);
      let resetsStruck = (): number => 0;
      const { emulator, proxy } = await startFar({
        oneWayDelayMs: oneWay,
        // 3 % of connections, and, from the fourth on, every one until a reset has fired (mid-request:
        // a connection opens to carry one), so that a reset does fire: a run killed before its
        // connection carried 200 bytes leaves the reset unstruck.
        faultFor: (connection) => {
          if (connection >= 3 && resetsStruck() === 0) return { up: { kind: 'reset', afterBytes: 200 } };
          if (random() >= 0.03) return undefined;
          return random() < 0.5
            ? { up: { kind: 'reset', afterBytes: Math.floor(random() * 20_000) } }
            : { down: { kind: 'reset', afterBytes: Math.floor(random() * 300) } };
        },
      });
      resetsStruck = () => proxy.stats().faultsStruck;
      // Each batch takes a while at the service too, so that a kill finds batches in flight.
      emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 40, times: Infinity });
      const { text, invalidRows } = csv(ROWS);
      const input = temp.path(`in-${oneWay}.csv`);
      writeFileSync(input, text);
      const validRows = [...Array(ROWS).keys()].filter((row) => !invalidRows.has(row));
      const checkpoint = temp.path(`cp-${oneWay}.json`);
      const rejects = temp.path(`rejects-${oneWay}.jsonl`);
      const args = ['finance', 'publish', '--app', DEMO_APP_ID, '--batch-size', '20', '--concurrency', '4', '--json'];
      args.push('--checkpoint', checkpoint, '--rejects', rejects, input);
      const env = emulatorEnv(emulator);
      const storedRows = (): number[] =>
        emulator.mock.state.records(DEMO_APP_ID).map((record) => Number(record.created) - FIRST_CREATED);

      type Counts = Record<
        'recordsSkipped' | 'recordsSent' | 'recordsUnknown' | 'recordsInvalid' | 'recordsFailed',
        number
      >;
      let finished: Counts | undefined;
      let kills = 0;
      for (let cycle = 0; finished === undefined && cycle < 40; cycle++) {
        const run = startCli(built.cli, args, { env, timeoutMs: 60_000 });
        if (kills < KILLS) {
          // From the first round trips (the token on its way) to well into the batches.
          await sleep(Math.floor(random() * 1200));
          run.child.kill('SIGKILL');
        }
        const result = await run.done;
        const context = `seed ${SEED}, one way ${oneWay} ms, cycle ${cycle}`;
        const stored = storedRows();
        expect(new Set(stored).size, `a row stored twice (${context})`).toBe(stored.length);
        const accounted = accountedFor(checkpoint);
        for (const row of stored) {
          expect(
            accounted.has(validRows.indexOf(row)),
            `row ${row} stored, unknown to the checkpoint (${context})`,
          ).toBe(true);
        }
        if (result.signal === 'SIGKILL') {
          kills++;
          continue;
        }
        const report = JSON.parse(result.stdout.trim().split('\n').at(-1) as string) as Record<string, unknown>;
        if (report.inputComplete === true && report.interrupted === false) finished = report as unknown as Counts;
        else expect.fail(`a run that was not killed did not finish (${context}): ${result.stderr}`);
      }
      expect(finished).toBeDefined();
      const report = finished as Counts;

      const unknownRows = new Set<number>();
      for (const line of readFileSync(rejects, 'utf8').split('\n').filter(Boolean)) {
        const entry = JSON.parse(line) as { kind: string; line: number };
        if (entry.kind === 'unknown') unknownRows.add(entry.line - 2);
      }
      const stored = new Set(storedRows());
      for (const row of validRows) {
        if (!unknownRows.has(row)) expect(stored.has(row), `row ${row} never stored`).toBe(true);
      }
      for (const row of stored) expect(invalidRows.has(row)).toBe(false);
      expect(
        report.recordsSkipped +
          report.recordsSent +
          report.recordsUnknown +
          report.recordsInvalid +
          report.recordsFailed,
      ).toBe(ROWS);
      expect(report.recordsUnknown).toBe(unknownRows.size);
      // Unknown: what each kill had in flight (4 batches of 20 at most), and a batch per reset.
      expect(unknownRows.size).toBeLessThanOrEqual(KILLS * 4 * 20 + proxy.stats().faultsStruck * 20);
      const { faultsStruck, connections } = proxy.stats();
      console.info(
        `far kill-resume (seed ${SEED}, ${oneWay} ms one way): ${kills} SIGKILLs, ${faultsStruck} resets of ${connections} connections; ` +
          `${unknownRows.size} rows unknown, ${stored.size} of ${validRows.length} valid rows stored`,
      );
      expect(kills).toBe(KILLS);
      expect(faultsStruck).toBeGreaterThan(0);
    },
    120_000,
  );

  it('paused (SIGSTOP) while its token ends, resumed, killed, and run again with another batch size and concurrency: every row once', async () => {
    const { emulator } = await startFar({ oneWayDelayMs: 25, emulator: { tokenTtlSeconds: 30 } });
    emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 40, times: Infinity });
    const { text, invalidRows } = csv(ROWS);
    const input = temp.path('paused.csv');
    writeFileSync(input, text);
    const validRows = [...Array(ROWS).keys()].filter((row) => !invalidRows.has(row));
    const checkpoint = temp.path('paused.json');
    const rejects = temp.path('paused.rejects.jsonl');
    const args = (batchSize: number, concurrency: number) => [
      ...['finance', 'publish', '--app', DEMO_APP_ID, '--json', '--checkpoint', checkpoint, '--rejects', rejects],
      ...['--batch-size', String(batchSize), '--concurrency', String(concurrency), input],
    ];
    const env = emulatorEnv(emulator);
    const storedRows = (): number[] =>
      emulator.mock.state.records(DEMO_APP_ID).map((record) => Number(record.created) - FIRST_CREATED);

    const first = startCli(built.cli, args(20, 4), { env, timeoutMs: 60_000 });
    await expect.poll(() => storedRows().length, { timeout: 30_000, interval: 5 }).toBeGreaterThanOrEqual(200);
    // The process sleeps with batches on the wire while its token ends at the service: on waking
    // it meets 401s, refreshes once and goes on.
    first.child.kill('SIGSTOP');
    emulator.mock.advanceTime(31_000);
    await sleep(500);
    const tokensBefore = emulator.mock.state.tokenRequestCount;
    first.child.kill('SIGCONT');
    await expect.poll(() => storedRows().length, { timeout: 30_000, interval: 5 }).toBeGreaterThanOrEqual(800);
    first.child.kill('SIGKILL');
    expect((await first.done).signal).toBe('SIGKILL');
    expect(emulator.mock.state.tokenRequestCount).toBeGreaterThan(tokensBefore);
    await sleep(300);
    const afterKill = storedRows();
    expect(new Set(afterKill).size).toBe(afterKill.length);
    const accounted = accountedFor(checkpoint);
    for (const row of afterKill) expect(accounted.has(validRows.indexOf(row)), `row ${row}`).toBe(true);

    // The record numbering is the input's, not the batches': other batches resume it just as well.
    const result = await startCli(built.cli, args(7, 16), { env, timeoutMs: 60_000 }).done;
    const report = JSON.parse(result.stdout) as Counts & { inputComplete: boolean };
    expect(report.inputComplete).toBe(true);
    expect(
      report.recordsSkipped + report.recordsSent + report.recordsUnknown + report.recordsInvalid + report.recordsFailed,
    ).toBe(ROWS);
    const unknownRows = new Set<number>();
    for (const line of readFileSync(rejects, 'utf8').split('\n').filter(Boolean)) {
      const entry = JSON.parse(line) as { kind: string; line: number };
      if (entry.kind === 'unknown') unknownRows.add(entry.line - 2);
    }
    expect(report.recordsUnknown).toBe(unknownRows.size);
    // At most what the killed run had in flight: 4 batches of 20.
    expect(unknownRows.size).toBeLessThanOrEqual(4 * 20);
    const rows = storedRows();
    expect(new Set(rows).size).toBe(rows.length);
    const stored = new Set(rows);
    for (const row of validRows)
      if (!unknownRows.has(row)) expect(stored.has(row), `row ${row} never stored`).toBe(true);
    for (const row of stored) expect(invalidRows.has(row)).toBe(false);
  }, 90_000);

  it.each([
    ['the first token', 'first'],
    ['a refresh mid-run', 'refresh'],
  ] as const)(
    'killed while %s is on its way: no row left unknown, and the re-run sends every row once',
    async (_, when) => {
      const { emulator } = await startFar({
        oneWayDelayMs: 50,
        emulator: { tokenTtlSeconds: 1 },
        // The first token's answer is held 5 s on its way.
        ...(when === 'first' && {
          faultFor: (connection: number) =>
            connection === 0 ? { down: { kind: 'stall', afterBytes: 0, forMs: 5_000 } } : undefined,
        }),
      });
      emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 40, times: Infinity });
      const rowCount = when === 'first' ? ROWS : 4 * ROWS;
      const { text, invalidRows } = csv(rowCount);
      const input = temp.path(`token-${when}.csv`);
      writeFileSync(input, text);
      const checkpoint = temp.path(`token-${when}.json`);
      const args = [
        'finance',
        'publish',
        '--app',
        DEMO_APP_ID,
        '--batch-size',
        '20',
        '--json',
        '--checkpoint',
        checkpoint,
        input,
      ];
      const env = emulatorEnv(emulator);
      const run = startCli(built.cli, args, { env, timeoutMs: 60_000 });
      if (when === 'first') await sleep(2_000);
      else {
        // Once the first batches are stored, every token request takes 5 s: the 1 s token's refresh is then on its way.
        while (emulator.mock.state.recordCount(DEMO_APP_ID) === 0) await sleep(5);
        emulator.mock.faults.add({ match: { operation: 'token' }, delayMs: 5_000, times: Infinity });
        await sleep(2_000);
      }
      run.child.kill('SIGKILL');
      expect((await run.done).signal).toBe('SIGKILL');
      const stored = emulator.mock.state.recordCount(DEMO_APP_ID);
      const file = JSON.parse(readFileSync(checkpoint, 'utf8')) as Record<string, Range[]>;
      const delivered = new RangeSet(file.delivered ?? []);
      // Every batch the run had read was waiting for its token. Only a batch the service refused
      // with a 401 (its token ended on the way, which a loaded machine's delays allow) stays
      // reserved while it waits for the refresh; before, the whole window did. A batch still on its
      // way when the process died (seconds late on a loaded machine) is reserved too, rightly: the
      // service stores it once it arrives, so it is counted from what is stored a moment later.
      const reservedRanges = new RangeSet(file.inFlight ?? []);
      const reserved = reservedRanges.size();
      await sleep(1_000);
      const validRows = [...Array(rowCount).keys()].filter((row) => !invalidRows.has(row));
      const arrivedLate = emulator.mock.state
        .records(DEMO_APP_ID)
        .filter((record) => reservedRanges.has(validRows.indexOf(Number(record.created) - FIRST_CREATED))).length;
      const refused = emulator.mock.state.requests.filter(
        (request) => request.operation === 'finance' && request.status === 401,
      ).length;
      const seen = {
        reserved,
        arrivedLate,
        refused,
        storedAtKill: stored,
        tokenRequests: emulator.mock.state.tokenRequestCount,
      };
      expect(reserved - arrivedLate, JSON.stringify(seen)).toBeLessThanOrEqual(20 * refused);
      expect(delivered.size()).toBe(stored);
      emulator.mock.faults.clear();

      const result = await startCli(built.cli, args, { env, timeoutMs: 60_000 }).done;
      const report = JSON.parse(result.stdout) as Counts;
      // The reserved rows, if any, are the re-run's unknown ones (not sent again); every other row is sent once.
      expect({
        code: result.code,
        unknown: report.recordsUnknown,
        sent: report.recordsSent + report.recordsSkipped,
      }).toEqual({
        code: 3, // the invalid rows (and the unknown ones, when there are)
        unknown: reserved,
        sent: rowCount - invalidRows.size - reserved,
      });
      const rows = emulator.mock.state.records(DEMO_APP_ID).map((record) => Number(record.created) - FIRST_CREATED);
      expect(new Set(rows).size).toBe(rows.length);
      expect(rows.length).toBeGreaterThanOrEqual(rowCount - invalidRows.size - reserved);
      expect(rows.length).toBeLessThanOrEqual(rowCount - invalidRows.size);
    },
    60_000,
  );
});
