/**
 * The checkpoint lock goes by name: a hard link is a second name with its own lock. A checkpoint
 * with more than one link is refused before anything is sent, whichever name is used.
 */
import { existsSync, linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { DEMO_APP_ID, type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildCli } from '../support/cli/build.js';
import { CSV_HEADER, csvRows, emulatorEnv, killChildren, makeTempDir, runCli } from '../support/cli/run.js';

let cli: string;
let emulator: RunningEmulator;
let temp: ReturnType<typeof makeTempDir>;
beforeAll(async () => {
  [cli, emulator] = await Promise.all([buildCli(), startEmulator({ port: 0 })]);
}, 60_000);
afterAll(async () => {
  killChildren();
  await emulator.close();
});
beforeEach(() => {
  emulator.mock.reset();
  temp = makeTempDir();
});
afterEach(() => temp.remove());

const env = () => ({ ...emulatorEnv(emulator), PUSH_APP_ID: DEMO_APP_ID });

describe('a hard-linked checkpoint', () => {
  it('is refused under either name, exit 2, naming the file and its link count; nothing is sent', async () => {
    const input = temp.path('in.csv');
    const checkpoint = temp.path('cp.json');
    const publish = (cp: string) => runCli(cli, ['finance', 'publish', input, '--checkpoint', cp], { env: env() });

    // A first run is stopped by a refused token after nothing was sent: the checkpoint exists,
    // and the next runs would send all 10 rows.
    writeFileSync(input, `${CSV_HEADER}\n${csvRows(10)}\n`);
    const refused = await runCli(cli, ['finance', 'publish', input, '--checkpoint', checkpoint], {
      env: { ...env(), PUSH_CLIENT_SECRET: 'wrong' },
    });
    expect(refused.code).not.toBe(0);
    expect(existsSync(checkpoint), refused.stderr).toBe(true);
    const before = readFileSync(checkpoint, 'utf8');
    emulator.mock.reset();

    const other = temp.path('other.json');
    linkSync(checkpoint, other);
    const [viaLink, viaOriginal] = await Promise.all([publish(other), publish(checkpoint)]);
    for (const [result, name] of [
      [viaLink, other],
      [viaOriginal, checkpoint],
    ] as const) {
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(`--checkpoint ${name} has 2 hard links`);
    }
    expect(emulator.mock.state.recordCount(DEMO_APP_ID)).toBe(0);
    expect(readFileSync(checkpoint, 'utf8')).toBe(before);
    // The refused runs leave no lock behind.
    expect(existsSync(`${checkpoint}.lock`) || existsSync(`${other}.lock`)).toBe(false);

    // One name again: one run sends each row once.
    unlinkSync(other);
    const resumed = await publish(checkpoint);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(emulator.mock.state.recordCount(DEMO_APP_ID)).toBe(10);
  }, 60_000);
});
