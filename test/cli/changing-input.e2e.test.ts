/**
 * An input file rewritten in place while `finance publish` reads it (an exporter that was not
 * finished): the run stops with an error naming the file, never reports success, never marks the
 * checkpoint complete, and sends nothing read after the change.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEMO_APP_ID } from 'push-api-client/testing';
import { expect, it } from 'vitest';
import { useCliFixture } from '../support/cli/emulator.js';
import { CSV_HEADER, csvRows, emulatorEnv, startCli } from '../support/cli/run.js';

const ctx = useCliFixture();

it('stops with exit 1 naming the file, keeps the checkpoint incomplete and sends no row read after the change', async () => {
  const input = ctx.temp.path('in.csv');
  const checkpoint = ctx.temp.path('cp.json');
  writeFileSync(input, `${CSV_HEADER}\n${csvRows(20_000)}\n`);
  ctx.emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 40, times: Infinity });
  const args = ['finance', 'publish', '--app', DEMO_APP_ID, '--json', '--batch-size', '20', '--concurrency', '1'];
  const run = startCli(ctx.cli, [...args, '--checkpoint', checkpoint, input], { env: emulatorEnv(ctx.emulator) });
  const stored = () => ctx.emulator.mock.state.records(DEMO_APP_ID);
  const deadline = Date.now() + 20_000;
  while (stored().length < 40 && Date.now() < deadline) await sleep(5);
  // Rewritten in place, shorter, its last row half written: 12 for an amount of 12.25.
  writeFileSync(input, `${CSV_HEADER}\n${csvRows(100)}\n1704067299999,12`);
  const result = await run.done;

  expect({ code: result.code, stderr: result.stderr }).toMatchObject({ code: 1 });
  expect(result.stderr).toContain(`${input} changed while it was read`);
  const report = JSON.parse(result.stdout);
  expect(report).toMatchObject({ ok: false, exitCode: 1, stopped: true, inputComplete: false });
  expect(report.error).toMatchObject({ name: 'InputChangedError' });
  expect(report.recordsSent).toBe(stored().length);
  // Only rows of the file as it was: the first ones, in order, none of them the half row.
  const created = stored().map((record) => Number(record.created) - 1704067200000);
  expect(created).toEqual(Array.from({ length: created.length }, (_, i) => i));
  const file = JSON.parse(readFileSync(checkpoint, 'utf8'));
  expect(file).toMatchObject({ complete: false, delivered: [[0, created.length]], inFlight: [] });
});
