/**
 * Where the CLI reads the client secret: whatever `--client-secret-file` names (a FIFO planted in
 * a shared directory, a device) or stdin carries, the run neither hangs past a signal nor reads
 * without end, and never prints the path.
 */
import { execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { DEMO_APP_ID, DEMO_CLIENT_SECRET } from 'push-api-client/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { expectSigtermEndsFifoWait, useCliFixture } from '../support/cli/emulator.js';
import { CSV_HEADER, csvRows, emulatorEnv, killChildren, runCli } from '../support/cli/run.js';

const ctx = useCliFixture();
afterAll(killChildren);

/** The emulator's settings without its secret: each case gives the secret its own way. */
function envWithoutSecret(): Record<string, string> {
  const { PUSH_CLIENT_SECRET: _secret, ...env } = emulatorEnv(ctx.emulator);
  return env;
}

function input(): string {
  const path = ctx.temp.path(`rows-${Math.random().toString(36).slice(2)}.csv`);
  writeFileSync(path, `${CSV_HEADER}\n${csvRows(3)}`);
  return path;
}

const publishArgs = (secretArgs: string[]) => ['finance', 'publish', '--app', DEMO_APP_ID, ...secretArgs, input()];

describe('--client-secret-file', () => {
  it('a FIFO nobody writes to: the run waits, and SIGTERM still ends it with exit 130', async () => {
    await expectSigtermEndsFifoWait(ctx, (fifo) => publishArgs(['--client-secret-file', fifo]), {
      env: envWithoutSecret(),
    });
  });

  it('a FIFO whose writer comes and goes without a byte: exit 2, saying nothing came through', async () => {
    const fifo = ctx.temp.path('empty-fifo');
    execFileSync('mkfifo', [fifo]);
    const writer = spawn('sh', ['-c', `sleep 0.5; : > "${fifo}"`]);
    const result = await runCli(ctx.cli, publishArgs(['--client-secret-file', fifo]), {
      env: envWithoutSecret(),
      timeoutMs: 20_000,
    });
    writer.kill();
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('nothing came through the pipe given to --client-secret-file');
  });

  it('a pipe with a writer (as process substitution gives): the secret is read and the run publishes', async () => {
    const fifo = ctx.temp.path('vault-fifo');
    execFileSync('mkfifo', [fifo]);
    const before = ctx.emulator.mock.state.recordCount(DEMO_APP_ID);
    const writer = spawn('sh', ['-c', `sleep 0.3; printf '%s\\n' "$SECRET" > "${fifo}"`], {
      env: { ...process.env, SECRET: DEMO_CLIENT_SECRET },
    });
    const result = await runCli(ctx.cli, publishArgs(['--client-secret-file', fifo]), {
      env: envWithoutSecret(),
      timeoutMs: 20_000,
    });
    writer.kill();
    expect(result.stderr).not.toContain(DEMO_CLIENT_SECRET);
    expect(result.code).toBe(0);
    expect(ctx.emulator.mock.state.recordCount(DEMO_APP_ID) - before).toBe(3);
  });

  it('a device (/dev/zero) is refused at once with exit 2, not read', async () => {
    const result = await runCli(ctx.cli, publishArgs(['--client-secret-file', '/dev/zero']), {
      env: envWithoutSecret(),
      timeoutMs: 20_000,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('the file given to --client-secret-file is not a regular file or a pipe');
    expect(result.stderr).not.toContain('/dev/zero');
  });

  it('a regular file past 64 KiB is refused with exit 2', async () => {
    const big = ctx.temp.path('big-secret');
    writeFileSync(big, `${DEMO_CLIENT_SECRET}\n${'x'.repeat(70_000)}`);
    const result = await runCli(ctx.cli, publishArgs(['--client-secret-file', big]), { env: envWithoutSecret() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('more than 64 KiB');
  });
});

describe('--client-secret-stdin', () => {
  it('a flood on stdin is refused past 64 KiB with exit 2', async () => {
    const result = await runCli(ctx.cli, publishArgs(['--client-secret-stdin']), {
      env: envWithoutSecret(),
      stdin: 'y'.repeat(4_000_000), // far past what the CLI reads: it exits while the rest is unwritten
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--client-secret-stdin: more than 64 KiB');
  });
});
