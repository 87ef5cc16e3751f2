import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEMO_APP_ID, DEMO_CLIENT_SECRET } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { useCliFixture } from '../support/cli/emulator.js';
import { ANSI_ESCAPE, emulatorEnv, runCli, startCli } from '../support/cli/run.js';

const ctx = useCliFixture();

describe('push-api token', () => {
  it('prints type, expiry and scopes but not the token', async () => {
    const result = await runCli(ctx.cli, ['token'], { env: emulatorEnv(ctx.emulator) });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/type\s+Bearer/);
    expect(result.stdout).toMatch(/scopes\s+\S+\/connector\.write/);
    const [issued] = ctx.emulator.mock.state.tokens;
    expect(result.stdout + result.stderr).not.toContain(issued?.token);
    expect(result.stdout + result.stderr).not.toContain(DEMO_CLIENT_SECRET);
  });

  it('prints the token with --print-token, and reads the secret from stdin', async () => {
    const env = { ...emulatorEnv(ctx.emulator), PUSH_CLIENT_SECRET: undefined };
    const result = await runCli(ctx.cli, ['token', '--print-token', '--client-secret-stdin'], {
      env,
      stdin: `${DEMO_CLIENT_SECRET}\n`,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(ctx.emulator.mock.state.tokens[0]?.token);
  });

  it('exits 1 with a one-line error when the credentials are wrong', async () => {
    const result = await runCli(ctx.cli, ['token'], {
      env: { ...emulatorEnv(ctx.emulator), PUSH_CLIENT_SECRET: 'wrong-secret' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^push-api: the token service at 127\.0\.0\.1:\d+ refused the credentials: /);
    expect(result.stderr).toContain('check clientId and clientSecret (PUSH_CLIENT_ID, PUSH_CLIENT_SECRET)');
    expect(result.stderr).not.toContain('wrong-secret');
  });

  it('names the address tried and PUSH_AUTH_URL when no token endpoint answers there', async () => {
    const env = emulatorEnv(ctx.emulator);
    const origin = new URL(env.PUSH_AUTH_URL ?? '').origin;
    const result = await runCli(ctx.cli, ['token', '--json'], { env: { ...env, PUSH_AUTH_URL: origin } });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      `push-api: the token service at ${new URL(origin).host} answered: Token request failed with HTTP 404: no token endpoint at ${origin}/oauth2/token; check authUrl (PUSH_AUTH_URL): tokens are requested from {authUrl}/oauth2/token`,
    );
    expect(JSON.parse(result.stdout)).toMatchObject({
      ok: false,
      exitCode: 1,
      command: 'token',
      error: { name: 'TokenError', code: 'http_error' },
    });
  });
});

describe('a finance command typed without finance', () => {
  it.each(['publish', 'template'])(
    'push-api %s points to the finance command, sends nothing and exits 2',
    async (name) => {
      const args = [name, '--app', DEMO_APP_ID, '--json', 'expenses.csv'];
      const result = await runCli(ctx.cli, args, { env: emulatorEnv(ctx.emulator) });
      expect(result.code).toBe(2);
      expect(result.stderr.trim()).toBe(`push-api: unknown command '${name}': did you mean push-api finance ${name}?`);
      expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, exitCode: 2, error: { name: 'UsageError' } });
      expect(ctx.emulator.mock.state.requests).toEqual([]);
    },
  );
});

describe('a secret typed on the command line', () => {
  const SECRET = 'TOPSECRET-9f3c1a';
  it.each([
    [['token', `--client-secret=${SECRET}`]],
    [['token', '--client-secret', SECRET]],
    [['token', `--client-secret-stdin=${SECRET}`]],
    [['token', `--client-secret-file=${SECRET}`]],
    [['token', `--clientsecret=${SECRET}`]],
    [['token', '--json', `--client-secret=${SECRET}`]],
    [['finance', 'publish', '--app', 'a', `--client-secret=${SECRET}`, 'x.csv']],
  ])('is echoed nowhere, and the run exits 2: %j', async (args) => {
    const result = await runCli(ctx.cli, args, {
      env: { ...emulatorEnv(ctx.emulator), PUSH_CLIENT_SECRET: undefined },
    });
    expect(result.code).toBe(2);
    expect(result.stdout + result.stderr).not.toContain(SECRET);
    expect(result.stdout + result.stderr).not.toContain('TOPSECRET');
  });

  it('names the unknown option without its value', async () => {
    const result = await runCli(ctx.cli, ['token', `--client-secret=${SECRET}`]);
    expect(result.stderr).toMatch(/unknown option '--client-secret' \(values are not echoed\)/);
  });
});

describe('--json on failure', () => {
  it.each([
    ['a usage error from commander', ['token', '--json', '--no-such-flag'], {}, 2, 'UsageError'],
    ['a missing setting', ['token', '--json'], { PUSH_CLIENT_ID: undefined }, 2, 'UsageError'],
    ['wrong credentials', ['token', '--json'], { PUSH_CLIENT_SECRET: 'wrong-secret' }, 1, 'TokenError'],
    ['a missing input file', ['finance', 'publish', '--app', 'a', '--json', 'missing.csv'], {}, 2, 'UsageError'],
    ['a glob that matches nothing', ['upload', '--app', 'a', '--json', 'none/*.csv'], {}, 2, 'UsageError'],
  ])('prints exactly one JSON error report on stdout for %s', async (_, args, env, exitCode, name) => {
    const result = await runCli(ctx.cli, args as string[], {
      env: { ...emulatorEnv(ctx.emulator), ...env },
      cwd: ctx.temp.dir,
    });
    expect(result.code).toBe(exitCode);
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
    const report = JSON.parse(result.stdout) as {
      ok: boolean;
      exitCode: number;
      error: { name: string; message: string };
    };
    expect(report).toMatchObject({ ok: false, exitCode, error: { name } });
    expect(report.error.message.length).toBeGreaterThan(0);
    expect(result.stdout).not.toContain('wrong-secret');
  });
});

describe('push-api upload', () => {
  it('uploads the files a glob matches and reports bytes per file, exit 0', async () => {
    writeFileSync(ctx.temp.path('users.csv'), 'email\na@example.com\n');
    writeFileSync(ctx.temp.path('contracts.csv'), 'vendor\nAcme\n');
    const result = await runCli(
      ctx.cli,
      ['upload', '--app', DEMO_APP_ID, '--type', 'users', '--json', `${ctx.temp.dir}/*.csv`],
      {
        env: emulatorEnv(ctx.emulator),
      },
    );
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ filesUploaded: 2, filesFailed: 0, bytesUploaded: 32 });
    expect(result.stderr).toMatch(/upload: users\.csv 20 B uploaded/);
    expect(result.stderr).not.toMatch(ANSI_ESCAPE);
    expect(
      ctx.emulator.mock.state
        .files(DEMO_APP_ID)
        .map((file) => file.name)
        .sort(),
    ).toEqual(['contracts.csv', 'users.csv']);
  });

  it('on Ctrl-C starts no more files, lets the one in flight finish, and reports every file, exit 130', async () => {
    for (const name of ['a', 'b', 'c', 'd']) writeFileSync(ctx.temp.path(`${name}.csv`), `x\n${name}\n`);
    ctx.emulator.mock.faults.add({ match: { operation: 'upload' }, delayMs: 400, times: Infinity });
    const { child, done } = startCli(
      ctx.cli,
      ['upload', '--app', DEMO_APP_ID, '--concurrency', '1', '--json', `${ctx.temp.dir}/*.csv`],
      { env: emulatorEnv(ctx.emulator) },
    );
    const deadline = Date.now() + 30_000;
    while (!ctx.emulator.mock.state.requests.some((request) => request.operation === 'upload')) {
      if (Date.now() > deadline) throw new Error('no file was uploaded within 30 s');
      await sleep(10);
    }
    child.kill('SIGINT');
    const result = await done;
    expect(result.code).toBe(130);
    const report = JSON.parse(result.stdout) as {
      files: { name: string; status: string }[];
      filesUploaded: number;
      filesNotStarted: number;
    };
    expect(report).toMatchObject({ ok: false, interrupted: true, filesFailed: 0 });
    expect(report.filesUploaded).toBeGreaterThanOrEqual(1);
    expect(report.filesNotStarted).toBeGreaterThanOrEqual(1);
    const statuses = report.files.map((file) => file.status);
    expect(statuses).toEqual([
      ...Array<string>(report.filesUploaded).fill('uploaded'),
      ...Array<string>(report.filesNotStarted).fill('not-started'),
    ]);
    expect(result.stderr).not.toMatch(/AbortError/);
    expect(ctx.emulator.mock.state.files(DEMO_APP_ID)).toHaveLength(report.filesUploaded);
  });

  it('reports a file as uploaded only once the storage host has confirmed it', async () => {
    writeFileSync(ctx.temp.path('users.csv'), 'email\na@example.com\n');
    ctx.emulator.mock.faults.add({ match: { operation: 'upload' }, status: 400, times: Infinity });
    const result = await runCli(ctx.cli, ['upload', '--app', DEMO_APP_ID, '--json', ctx.temp.path('users.csv')], {
      env: emulatorEnv(ctx.emulator),
    });
    expect(result.code).toBe(3);
    expect(result.stderr).not.toMatch(/users\.csv .* (sent|uploaded)/);
    expect(JSON.parse(result.stdout)).toMatchObject({ filesUploaded: 0, filesFailed: 1 });
  });

  it('exits 2 when a glob matches nothing', async () => {
    const result = await runCli(ctx.cli, ['upload', '--app', DEMO_APP_ID, `${ctx.temp.dir}/*.none`], {
      env: emulatorEnv(ctx.emulator),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/no file matches/);
  });
});

describe('push-api demo', () => {
  it('runs token, upload and publish against the embedded emulator', async () => {
    const result = await runCli(ctx.cli, ['demo', '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      publish: { recordsSent: 2500 },
      upload: { filesUploaded: 2 },
      recordsStored: 2500,
    });
  });
});
