import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEMO_APP_ID } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { useCliFixture } from '../support/cli/emulator.js';
import { CSV_HEADER, csvRows, emulatorEnv, runCli, startCli } from '../support/cli/run.js';

const ctx = useCliFixture();

function delivered(): number[] {
  return ctx.emulator.mock.state.records(DEMO_APP_ID).map((record) => Number(record.created) - 1704067200000);
}

describe('push-api finance publish --checkpoint', () => {
  it('resumes after a run killed mid-way without sending any record twice', async () => {
    const total = 400;
    writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(total)}\n`);
    ctx.emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 150, times: Infinity });
    const args = ['finance', 'publish', '--app', DEMO_APP_ID, '--batch-size', '20', '--concurrency', '2'];
    const checkpointArgs = [
      '--checkpoint',
      ctx.temp.path('cp.json'),
      '--rejects',
      ctx.temp.path('r.jsonl'),
      ctx.temp.path('in.csv'),
    ];
    const first = startCli(ctx.cli, [...args, ...checkpointArgs], { env: emulatorEnv(ctx.emulator) });
    const deadline = Date.now() + 10_000;
    while (ctx.emulator.mock.state.recordCount(DEMO_APP_ID) < 60 && Date.now() < deadline) await sleep(20);
    await sleep(30);
    first.child.kill('SIGKILL');
    const killed = await first.done;
    expect(killed.signal).toBe('SIGKILL');
    const afterKill = ctx.emulator.mock.state.recordCount(DEMO_APP_ID);
    expect(afterKill).toBeGreaterThanOrEqual(60);
    expect(afterKill).toBeLessThan(total);
    expect(existsSync(ctx.temp.path('cp.json'))).toBe(true);

    ctx.emulator.mock.faults.clear();
    const second = await runCli(ctx.cli, [...args, '--json', ...checkpointArgs], { env: emulatorEnv(ctx.emulator) });
    const report = JSON.parse(second.stdout) as { recordsSent: number; recordsUnknown: number; recordsSkipped: number };
    const ids = delivered();
    expect(new Set(ids).size).toBe(ids.length);
    // Records in flight at the kill are unknown: not resent, listed in the rejects for reconciliation.
    expect(report.recordsSkipped + report.recordsSent + report.recordsUnknown).toBe(total);
    expect(ids.length).toBeLessThanOrEqual(total);
    expect(second.code).toBe(report.recordsUnknown > 0 ? 3 : 0);
    const unknown = readFileSync(ctx.temp.path('r.jsonl'), 'utf8').trim().split('\n').filter(Boolean);
    expect(unknown).toHaveLength(report.recordsUnknown);

    // --resend-unknown sends exactly the records nobody has confirmed, once.
    const third = await runCli(ctx.cli, [...args, '--json', '--resend-unknown', ...checkpointArgs], {
      env: emulatorEnv(ctx.emulator),
    });
    expect(JSON.parse(third.stdout)).toMatchObject({ recordsSent: report.recordsUnknown, recordsUnknown: 0 });
    expect(third.code).toBe(0);
  }, 30_000);

  it('resumes after one Ctrl-C with no unknown records, delivering every record exactly once', async () => {
    const total = 400;
    writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(total)}\n`);
    ctx.emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 100, times: Infinity });
    const args = [
      'finance',
      'publish',
      '--app',
      DEMO_APP_ID,
      '--batch-size',
      '20',
      '--concurrency',
      '2',
      '--json',
      '--checkpoint',
      ctx.temp.path('cp.json'),
      ctx.temp.path('in.csv'),
    ];
    const first = startCli(ctx.cli, args, { env: emulatorEnv(ctx.emulator) });
    const deadline = Date.now() + 10_000;
    while (ctx.emulator.mock.state.recordCount(DEMO_APP_ID) < 40 && Date.now() < deadline) await sleep(20);
    first.child.kill('SIGINT');
    const stopped = await first.done;
    expect(stopped.code).toBe(130);
    const stoppedReport = JSON.parse(stopped.stdout) as { interrupted: boolean; recordsUnknown: number };
    expect(stoppedReport).toMatchObject({ interrupted: true, recordsUnknown: 0 });
    expect(ctx.emulator.mock.state.recordCount(DEMO_APP_ID)).toBeLessThan(total);

    ctx.emulator.mock.faults.clear();
    const second = await runCli(ctx.cli, args, { env: emulatorEnv(ctx.emulator) });
    expect(JSON.parse(second.stdout)).toMatchObject({ recordsUnknown: 0, recordsFailed: 0 });
    expect(second.code).toBe(0);
    const ids = delivered();
    expect(ids).toHaveLength(total);
    expect(new Set(ids).size).toBe(total);
  }, 30_000);

  it('resumes after a run stopped by a 404 (a mistyped app) with no phantom unknown records', async () => {
    const total = 100;
    writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(total)}\n`);
    const args = (app: string) => [
      'finance',
      'publish',
      '--app',
      app,
      '--batch-size',
      '10',
      '--json',
      '--checkpoint',
      ctx.temp.path('cp.json'),
      ctx.temp.path('in.csv'),
    ];
    const wrong = await runCli(ctx.cli, args('no-such-app'), { env: emulatorEnv(ctx.emulator) });
    expect(wrong.code).toBe(1);
    expect(JSON.parse(wrong.stdout)).toMatchObject({ recordsSent: 0, recordsUnknown: 0 });
    const right = await runCli(ctx.cli, args(DEMO_APP_ID), { env: emulatorEnv(ctx.emulator) });
    expect(JSON.parse(right.stdout)).toMatchObject({ recordsSent: total, recordsUnknown: 0, recordsSkipped: 0 });
    expect(right.code).toBe(0);
    expect(delivered()).toHaveLength(total);
  });

  it('refuses a checkpoint that delivered records to another app, exit 2, sending nothing', async () => {
    writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(5)}\n`);
    const args = (app: string) => [
      'finance',
      'publish',
      '--app',
      app,
      '--checkpoint',
      ctx.temp.path('cp.json'),
      ctx.temp.path('in.csv'),
    ];
    expect((await runCli(ctx.cli, args(DEMO_APP_ID), { env: emulatorEnv(ctx.emulator) })).code).toBe(0);
    const requests = ctx.emulator.mock.state.requests.length;
    const other = await runCli(ctx.cli, args('other-app'), { env: emulatorEnv(ctx.emulator) });
    expect(other.code).toBe(2);
    expect(other.stderr.trim().split('\n')).toHaveLength(1);
    expect(other.stderr).toMatch(/was written for app "demo-app" at http:\/\/127\.0\.0\.1:\d+\/, not app "other-app"/);
    expect(ctx.emulator.mock.state.requests).toHaveLength(requests);
  });

  it('refuses a checkpoint written for different input, exit 2', async () => {
    writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(5)}\n`);
    const args = [
      'finance',
      'publish',
      '--app',
      DEMO_APP_ID,
      '--checkpoint',
      ctx.temp.path('cp.json'),
      ctx.temp.path('in.csv'),
    ];
    expect((await runCli(ctx.cli, args, { env: emulatorEnv(ctx.emulator) })).code).toBe(0);
    writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(6)}\n`);
    const again = await runCli(ctx.cli, args, { env: emulatorEnv(ctx.emulator) });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/different input/);
    expect(ctx.emulator.mock.state.recordCount(DEMO_APP_ID)).toBe(5);
  });
});
