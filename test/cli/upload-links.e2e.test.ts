/**
 * `push-api upload` over a shared directory where another user planted links: a real CLI process
 * against the emulator. Runs as root, as CI does: only root can give a link to another user.
 */
import { chmodSync, lchownSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEMO_APP_ID } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { expectRefusedBeforeSending as expectRefused, useCliFixture } from '../support/cli/emulator.js';
import { emulatorEnv, type RunResult, runCli } from '../support/cli/run.js';

const ctx = useCliFixture();
const NOBODY = 65534;

function upload(files: string[]): Promise<RunResult> {
  return runCli(ctx.cli, ['upload', '--app', DEMO_APP_ID, ...files], {
    env: emulatorEnv(ctx.emulator),
    timeoutMs: 30_000,
  });
}

function expectRefusedBeforeSending(result: RunResult, message: RegExp): void {
  expectRefused(result, message, ctx.emulator);
}

/** A directory like /tmp (sticky, world-writable) holding one export, and a private file of this user's. */
function sharedExports(): { shared: string; secret: string } {
  const shared = ctx.temp.path('shared');
  mkdirSync(shared);
  chmodSync(shared, 0o1777);
  writeFileSync(join(shared, 'users.csv'), 'email\na@example.com\n');
  const home = ctx.temp.path('home');
  mkdirSync(home);
  const secret = join(home, 'credentials');
  writeFileSync(secret, 'aws_secret_access_key=PRIVATE\n', { mode: 0o600 });
  return { shared, secret };
}

describe('links planted by another user', () => {
  it('refuses a glob that matches a link owned by another user, before sending anything', async () => {
    const { shared, secret } = sharedExports();
    const planted = join(shared, 'zz-report.csv');
    symlinkSync(secret, planted);
    lchownSync(planted, NOBODY, NOBODY);
    const result = await upload([join(shared, '*.csv')]);
    expectRefusedBeforeSending(
      result,
      /zz-report\.csv: is a link owned by another user \(uid 65534\); name the file itself/,
    );
    expect(ctx.emulator.mock.state.files(DEMO_APP_ID)).toEqual([]);
  });

  it('refuses an explicit path through a directory link owned by another user, and follows one of this user', async () => {
    const { shared } = sharedExports();
    const elsewhere = ctx.temp.path('elsewhere');
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, 'contracts.csv'), 'id\n1\n');
    const planted = join(shared, 'latest');
    symlinkSync(elsewhere, planted);
    lchownSync(planted, NOBODY, NOBODY);
    const refused = await upload([join(planted, 'contracts.csv')]);
    expectRefusedBeforeSending(refused, /contracts\.csv: goes through .*shared\/latest, a link owned by another user/);

    lchownSync(planted, process.getuid?.() ?? 0, process.getgid?.() ?? 0);
    const ok = await upload([join(planted, 'contracts.csv')]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ctx.emulator.mock.state.file(DEMO_APP_ID, 'contracts.csv')?.size).toBe(5);
  });
});
