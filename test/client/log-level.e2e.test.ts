/** PUSH_LOG in a real program: the log lines go to stderr, never to stdout (a process of its own). */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

describe('PUSH_LOG in a program', () => {
  it('a program started with PUSH_LOG=debug writes the lines to stderr and nothing to stdout', async () => {
    const script = `
      import { PushClient } from './src/index.ts';
      import { createPushApiHandler } from './src/testing/index.ts';
      const emulator = createPushApiHandler();
      const client = new PushClient({ fetch: emulator.fetch });
      await client.tokens.getToken();
    `;
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '-e', script], {
      env: {
        ...process.env,
        PUSH_LOG: 'debug',
        PUSH_CLIENT_ID: 'demo-client',
        PUSH_CLIENT_SECRET: 'demo-secret-do-not-use-in-production',
        PUSH_AUTH_URL: 'https://auth.push.test',
        PUSH_BASE_URL: 'https://api.push.test',
        PUSH_SCOPE_BASE: 'https://api.push.test',
      },
    });
    expect(stdout).toBe('');
    expect(stderr).toMatch(/ debug push-api-client request \{"operation":"token","method":"POST".*"status":200/);
    expect(stderr).toMatch(/ debug push-api-client token acquired /);
    expect(stderr).not.toContain('demo-secret-do-not-use-in-production');
  });
});
