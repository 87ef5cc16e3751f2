import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startEmulator } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

/** The environment without any PUSH_* variable. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PUSH_')));
}

async function demo(env: NodeJS.ProcessEnv): Promise<string> {
  const { stdout } = await run('npx', ['tsx', 'examples/quickstart.ts'], { cwd: root, env, timeout: 60_000 });
  return stdout;
}

function expectThreeSteps(stdout: string): void {
  expect(stdout).toMatch(/1\. Token: Bearer, expires \S+, scopes \S+\/connector\.write/);
  expect(stdout).toContain('2. Upload: 2 uploaded, 0 failed');
  expect(stdout).toContain('3. Finance: 2500 sent, 0 invalid, 0 failed, 0 unknown, in 3 batches');
  expect(stdout).toContain('batch 2: records 2000-2499 sent');
}

describe('examples/quickstart.ts', () => {
  it('with no PUSH_* environment, runs the three steps against the embedded emulator', async () => {
    const stdout = await demo(cleanEnv());
    expect(stdout).toContain('Using the embedded emulator');
    expectThreeSteps(stdout);
  }, 90_000);

  it('with PUSH_* set, reads its configuration from the environment', async () => {
    const emulator = await startEmulator();
    try {
      const stdout = await demo({
        ...cleanEnv(),
        PUSH_CLIENT_ID: emulator.mock.clientId,
        PUSH_CLIENT_SECRET: emulator.mock.clientSecret,
        PUSH_AUTH_URL: emulator.authUrl,
        PUSH_BASE_URL: emulator.baseUrl,
        PUSH_SCOPE_BASE: emulator.mock.scopeBase,
        PUSH_APP_ID: emulator.mock.appId,
      });
      expect(stdout).not.toContain('embedded emulator');
      expectThreeSteps(stdout);
      expect(emulator.mock.state.recordCount(emulator.mock.appId)).toBe(2_500);
      expect(
        emulator.mock.state
          .files(emulator.mock.appId)
          .map((f) => f.name)
          .sort(),
      ).toEqual(['contracts.csv', 'users.csv']);
    } finally {
      await emulator.close();
    }
  }, 90_000);
});
