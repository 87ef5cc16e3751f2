/**
 * The wall clock stepped under a running CLI (NTP correcting a drifted clock, a VM resumed from a
 * snapshot): durations and the progress lines a CI log shows go by the run's own time.
 */

import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { DEMO_APP_ID } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { useCliFixture } from '../support/cli/emulator.js';
import { CSV_HEADER, csvRows, emulatorEnv, runCli } from '../support/cli/run.js';

const ctx = useCliFixture();
const CLOCK_STEP = resolve(import.meta.dirname, '../support/clock-step.mjs');

describe('a wall clock stepped back an hour mid-run', () => {
  it('publish reports a true duration and keeps printing its progress line every 2 s', async () => {
    writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(100)}\n`);
    // Ten batches one after the other, 500 ms each: about 5 s, so at least two progress lines.
    ctx.emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 500, times: Infinity });
    const env = {
      ...emulatorEnv(ctx.emulator),
      NODE_OPTIONS: `--import "${CLOCK_STEP}"`,
      CLOCK_STEP_MS: String(-3_600_000),
      CLOCK_STEP_AFTER_MS: '500',
    };
    const args = ['finance', 'publish', '--app', DEMO_APP_ID, '--json', '--batch-size', '10', '--concurrency', '1'];
    const result = await runCli(ctx.cli, [...args, '--fixed-concurrency', ctx.temp.path('in.csv')], { env });
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.recordsSent).toBe(100);
    expect(report.durationMs).toBeGreaterThanOrEqual(4_000);
    expect(report.durationMs).toBeLessThan(60_000);
    const lines = result.stderr.split('\n').filter((line) => line.startsWith('publish: '));
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines.every((line) => /\| \d+\/s /.test(line))).toBe(true);
  }, 60_000);
});
