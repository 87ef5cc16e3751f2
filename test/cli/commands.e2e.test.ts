import { writeFileSync } from 'node:fs';
import { DEMO_APP_ID, DEMO_CLIENT_SECRET, type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildCli } from './helpers/build.js';
import { ANSI_ESCAPE, emulatorEnv, killChildren, makeTempDir, runCli } from './helpers/run.js';

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

describe('push-api token', () => {
  it('prints type, expiry and scopes but not the token', async () => {
    const result = await runCli(cli, ['token'], { env: emulatorEnv(emulator) });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/type\s+Bearer/);
    expect(result.stdout).toMatch(/scopes\s+\S+\/connector\.write/);
    const [issued] = emulator.mock.state.tokens;
    expect(result.stdout + result.stderr).not.toContain(issued?.token);
    expect(result.stdout + result.stderr).not.toContain(DEMO_CLIENT_SECRET);
  });

  it('prints the token with --print-token, and reads the secret from stdin', async () => {
    const env = { ...emulatorEnv(emulator), PUSH_CLIENT_SECRET: undefined };
    const result = await runCli(cli, ['token', '--print-token', '--client-secret-stdin'], {
      env,
      stdin: `${DEMO_CLIENT_SECRET}\n`,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(emulator.mock.state.tokens[0]?.token);
  });

  it('exits 1 with a one-line error when the credentials are wrong', async () => {
    const result = await runCli(cli, ['token'], {
      env: { ...emulatorEnv(emulator), PUSH_CLIENT_SECRET: 'wrong-secret' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/TokenError/);
    expect(result.stderr).not.toContain('wrong-secret');
  });
});

describe('push-api upload', () => {
  it('uploads the files a glob matches and reports bytes per file, exit 0', async () => {
    writeFileSync(temp.path('users.csv'), 'email\na@example.com\n');
    writeFileSync(temp.path('contracts.csv'), 'vendor\nAcme\n');
    const result = await runCli(
      cli,
      ['upload', '--app', DEMO_APP_ID, '--type', 'users', '--json', `${temp.dir}/*.csv`],
      {
        env: emulatorEnv(emulator),
      },
    );
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ filesUploaded: 2, filesFailed: 0, bytesUploaded: 32 });
    expect(result.stderr).toMatch(/users\.csv 20 B sent/);
    expect(result.stderr).not.toMatch(ANSI_ESCAPE);
    expect(
      emulator.mock.state
        .files(DEMO_APP_ID)
        .map((file) => file.name)
        .sort(),
    ).toEqual(['contracts.csv', 'users.csv']);
  });

  it('exits 2 when a glob matches nothing', async () => {
    const result = await runCli(cli, ['upload', '--app', DEMO_APP_ID, `${temp.dir}/*.none`], {
      env: emulatorEnv(emulator),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/no file matches/);
  });
});

describe('push-api demo', () => {
  it('runs token, upload and publish against the embedded emulator', async () => {
    const result = await runCli(cli, ['demo', '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      publish: { recordsSent: 2500 },
      upload: { filesUploaded: 2 },
      recordsStored: 2500,
    });
  });
});
