import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEMO_APP_ID, type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildCli } from './helpers/build.js';
import { CSV_HEADER, csvRows, emulatorEnv, killChildren, makeTempDir, runCli, startCli } from './helpers/run.js';

let cli: string;
let emulator: RunningEmulator;
let temp: ReturnType<typeof makeTempDir>;

beforeAll(async () => {
  cli = await buildCli();
}, 60_000);
beforeEach(async () => {
  emulator = await startEmulator({ port: 0 });
  temp = makeTempDir();
});
afterEach(async () => {
  killChildren();
  await emulator.close();
  temp.remove();
});

function delivered(): number[] {
  return emulator.mock.state.records(DEMO_APP_ID).map((record) => Number(record.created) - 1704067200000);
}

describe('push-api finance publish --checkpoint', () => {
  it('resumes after a run killed mid-way without sending any record twice', async () => {
    const total = 400;
    writeFileSync(temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(total)}\n`);
    emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 150 });
    const args = ['finance', 'publish', '--app', DEMO_APP_ID, '--batch-size', '20', '--concurrency', '2'];
    const checkpointArgs = [
      '--checkpoint',
      temp.path('cp.json'),
      '--rejects',
      temp.path('r.jsonl'),
      temp.path('in.csv'),
    ];
    const first = startCli(cli, [...args, ...checkpointArgs], { env: emulatorEnv(emulator) });
    const deadline = Date.now() + 10_000;
    while (emulator.mock.state.recordCount(DEMO_APP_ID) < 60 && Date.now() < deadline) await sleep(20);
    await sleep(30);
    first.child.kill('SIGKILL');
    const killed = await first.done;
    expect(killed.signal).toBe('SIGKILL');
    const afterKill = emulator.mock.state.recordCount(DEMO_APP_ID);
    expect(afterKill).toBeGreaterThanOrEqual(60);
    expect(afterKill).toBeLessThan(total);
    expect(existsSync(temp.path('cp.json'))).toBe(true);

    emulator.mock.faults.clear();
    const second = await runCli(cli, [...args, '--json', ...checkpointArgs], { env: emulatorEnv(emulator) });
    const report = JSON.parse(second.stdout) as { recordsSent: number; recordsUnknown: number; recordsSkipped: number };
    const ids = delivered();
    expect(new Set(ids).size).toBe(ids.length);
    // Records in flight at the kill are unknown: not resent, listed in the rejects for reconciliation.
    expect(report.recordsSkipped + report.recordsSent + report.recordsUnknown).toBe(total);
    expect(ids.length).toBeLessThanOrEqual(total);
    expect(second.code).toBe(report.recordsUnknown > 0 ? 3 : 0);
    const unknown = readFileSync(temp.path('r.jsonl'), 'utf8').trim().split('\n').filter(Boolean);
    expect(unknown).toHaveLength(report.recordsUnknown);

    // --resend-unknown sends exactly the records nobody has confirmed, once.
    const third = await runCli(cli, [...args, '--json', '--resend-unknown', ...checkpointArgs], {
      env: emulatorEnv(emulator),
    });
    expect(JSON.parse(third.stdout)).toMatchObject({ recordsSent: report.recordsUnknown, recordsUnknown: 0 });
    expect(third.code).toBe(0);
  }, 30_000);

  it('resumes after one Ctrl-C with no unknown records, delivering every record exactly once', async () => {
    const total = 400;
    writeFileSync(temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(total)}\n`);
    emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 100, times: Infinity });
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
      temp.path('cp.json'),
      temp.path('in.csv'),
    ];
    const first = startCli(cli, args, { env: emulatorEnv(emulator) });
    const deadline = Date.now() + 10_000;
    while (emulator.mock.state.recordCount(DEMO_APP_ID) < 40 && Date.now() < deadline) await sleep(20);
    first.child.kill('SIGINT');
    const stopped = await first.done;
    expect(stopped.code).toBe(1);
    const stoppedReport = JSON.parse(stopped.stdout) as { interrupted: boolean; recordsUnknown: number };
    expect(stoppedReport).toMatchObject({ interrupted: true, recordsUnknown: 0 });
    expect(emulator.mock.state.recordCount(DEMO_APP_ID)).toBeLessThan(total);

    emulator.mock.faults.clear();
    const second = await runCli(cli, args, { env: emulatorEnv(emulator) });
    expect(JSON.parse(second.stdout)).toMatchObject({ recordsUnknown: 0, recordsFailed: 0 });
    expect(second.code).toBe(0);
    const ids = delivered();
    expect(ids).toHaveLength(total);
    expect(new Set(ids).size).toBe(total);
  }, 30_000);

  it('resumes after a run stopped by a 404 (a mistyped app) with no phantom unknown records', async () => {
    const total = 100;
    writeFileSync(temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(total)}\n`);
    const args = (app: string) => [
      'finance',
      'publish',
      '--app',
      app,
      '--batch-size',
      '10',
      '--json',
      '--checkpoint',
      temp.path('cp.json'),
      temp.path('in.csv'),
    ];
    const wrong = await runCli(cli, args('no-such-app'), { env: emulatorEnv(emulator) });
    expect(wrong.code).toBe(1);
    expect(JSON.parse(wrong.stdout)).toMatchObject({ recordsSent: 0, recordsUnknown: 0 });
    const right = await runCli(cli, args(DEMO_APP_ID), { env: emulatorEnv(emulator) });
    expect(JSON.parse(right.stdout)).toMatchObject({ recordsSent: total, recordsUnknown: 0, recordsSkipped: 0 });
    expect(right.code).toBe(0);
    expect(delivered()).toHaveLength(total);
  });

  it('refuses a checkpoint that delivered records to another app, exit 2, sending nothing', async () => {
    writeFileSync(temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(5)}\n`);
    const args = (app: string) => [
      'finance',
      'publish',
      '--app',
      app,
      '--checkpoint',
      temp.path('cp.json'),
      temp.path('in.csv'),
    ];
    expect((await runCli(cli, args(DEMO_APP_ID), { env: emulatorEnv(emulator) })).code).toBe(0);
    const requests = emulator.mock.state.requests.length;
    const other = await runCli(cli, args('other-app'), { env: emulatorEnv(emulator) });
    expect(other.code).toBe(2);
    expect(other.stderr.trim().split('\n')).toHaveLength(1);
    expect(other.stderr).toMatch(/was written for app "demo-app" at http:\/\/127\.0\.0\.1:\d+\/, not app "other-app"/);
    expect(emulator.mock.state.requests).toHaveLength(requests);
  });

  it('refuses a checkpoint written for different input, exit 2', async () => {
    writeFileSync(temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(5)}\n`);
    const args = [
      'finance',
      'publish',
      '--app',
      DEMO_APP_ID,
      '--checkpoint',
      temp.path('cp.json'),
      temp.path('in.csv'),
    ];
    expect((await runCli(cli, args, { env: emulatorEnv(emulator) })).code).toBe(0);
    writeFileSync(temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(6)}\n`);
    const again = await runCli(cli, args, { env: emulatorEnv(emulator) });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/different input/);
    expect(emulator.mock.state.recordCount(DEMO_APP_ID)).toBe(5);
  });
});
