/**
 * The files `finance publish` and `emulator --save` write, attacked with every spelling of "the
 * input", with each other, and with special files: real CLI processes against the emulator.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  existsSync,
  ftruncateSync,
  lchownSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { hostname } from 'node:os';
import { basename, join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEMO_APP_ID } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { MAX_CHECKPOINT_BYTES } from '../../src/cli/checkpoint.js';
import { pidNamespace } from '../../src/cli/pid-namespace.js';
import { useCliFixture } from '../support/cli/emulator.js';
import { CSV_HEADER, csvRows, emulatorEnv, type RunResult, runCli, startCli } from '../support/cli/run.js';

const ctx = useCliFixture();
const INPUT = `${CSV_HEADER}\n${csvRows(30)}\n`;

function publish(extra: string[], options: { cwd?: string } = {}): Promise<RunResult> {
  const args = ['finance', 'publish', '--app', DEMO_APP_ID, '--batch-size', '10', ...extra];
  return runCli(ctx.cli, args, { env: emulatorEnv(ctx.emulator), cwd: options.cwd, timeoutMs: 30_000 });
}

function writeInput(): string {
  const input = ctx.temp.path('in.csv');
  writeFileSync(input, INPUT);
  return input;
}

/** Refused with exit 2, the input intact, and nothing (not even a token request) sent. */
function expectRefusedBeforeSending(result: RunResult, message: RegExp, input?: string): void {
  expect(result.signal).toBeNull();
  expect(result.stderr).toMatch(message);
  expect(result.code).toBe(2);
  expect(ctx.emulator.mock.state.tokenRequestCount).toBe(0);
  expect(ctx.emulator.mock.state.requests).toHaveLength(0);
  if (input !== undefined) expect(readFileSync(input, 'utf8')).toBe(INPUT);
}

function mode(path: string): number {
  return statSync(path).mode & 0o777;
}

describe('--rejects and --checkpoint are never the input', () => {
  it.each([
    ['the same path', (input: string) => input],
    ['a ./ spelling', (input: string) => `./${relative(ctx.temp.dir, input)}`],
    ['an a/../ spelling', () => join(ctx.temp.dir, 'sub', '..', 'in.csv')],
    ['a symbolic link to it', () => ctx.temp.path('link.csv')],
    ['a hard link to it', () => ctx.temp.path('hard.csv')],
  ])('refuses --rejects that is the input by %s', async (_name, spell) => {
    const input = writeInput();
    mkdirSync(ctx.temp.path('sub'));
    symlinkSync(input, ctx.temp.path('link.csv'));
    linkSync(input, ctx.temp.path('hard.csv'));
    const rejects = spell(input);
    const result = await publish(['--rejects', rejects, 'in.csv'], { cwd: ctx.temp.dir });
    expectRefusedBeforeSending(result, /--rejects .* is the input file/, input);
    const checkpoint = await publish(['--checkpoint', rejects, 'in.csv'], { cwd: ctx.temp.dir });
    expectRefusedBeforeSending(checkpoint, /--checkpoint .* is the input file/, input);
  });

  it('refuses --rejects that is the checkpoint, by the same path, a spelling or a link', async () => {
    const input = writeInput();
    const checkpoint = ctx.temp.path('cp.json');
    writeFileSync(ctx.temp.path('other.json'), '');
    symlinkSync(checkpoint, ctx.temp.path('cp-link.json'));
    // A checkpoint that does not exist yet, spelled twice.
    for (const rejects of [
      checkpoint,
      `${ctx.temp.dir}/./cp.json`,
      `${ctx.temp.dir}/../${basename(ctx.temp.dir)}/cp.json`,
    ]) {
      const result = await publish(['--checkpoint', checkpoint, '--rejects', rejects, input]);
      expectRefusedBeforeSending(result, /are the same file/, input);
    }
    // An existing checkpoint, a symbolic link and a hard link to it.
    writeFileSync(checkpoint, '{}');
    linkSync(checkpoint, ctx.temp.path('cp-hard.json'));
    for (const rejects of [ctx.temp.path('cp-link.json'), ctx.temp.path('cp-hard.json')]) {
      const result = await publish(['--checkpoint', checkpoint, '--rejects', rejects, input]);
      expectRefusedBeforeSending(result, /are the same file/, input);
    }
    expect(readFileSync(checkpoint, 'utf8')).toBe('{}');
    // Nor the checkpoint's lock file.
    const lock = await publish(['--checkpoint', checkpoint, '--rejects', `${checkpoint}.lock`, input]);
    expectRefusedBeforeSending(lock, /are the same file/, input);
  });
});

describe('links to regular files', () => {
  it('resumes from a checkpoint named through a link, writing the file it points to and keeping the link', async () => {
    const input = writeInput();
    mkdirSync(ctx.temp.path('state'));
    const real = ctx.temp.path('state/cp.json');
    expect((await publish(['--checkpoint', real, input])).code).toBe(0);
    const link = ctx.temp.path('cp-link.json');
    symlinkSync('state/cp.json', link);
    const before = readFileSync(real, 'utf8');
    const resumed = await publish(['--json', '--checkpoint', link, input]);
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ recordsSent: 0, recordsSkipped: 30 });
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(real, 'utf8')).not.toBe(before);
    expect(mode(real)).toBe(0o600);
    expect(ctx.emulator.mock.state.recordCount(DEMO_APP_ID)).toBe(30);
  });
});

describe('links planted by another user', () => {
  // Runs as root, as CI does: only root can give a link to another user.
  it('refuses a --rejects link owned by another user instead of writing where it points', async () => {
    const input = writeInput();
    const victim = ctx.temp.path('victim.txt');
    writeFileSync(victim, 'precious');
    const planted = ctx.temp.path('r.jsonl');
    symlinkSync(victim, planted);
    lchownSync(planted, 65534, 65534);
    const result = await publish(['--rejects', planted, input]);
    expectRefusedBeforeSending(result, /--rejects .*r\.jsonl: a link owned by another user/, input);
    expect(readFileSync(victim, 'utf8')).toBe('precious');
  });

  it('refuses a directory link another user planted in a shared directory, for --rejects and --checkpoint', async () => {
    const input = writeInput();
    // A /tmp of its own: sticky and world-writable, owned by this user.
    const shared = ctx.temp.path('shared');
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    const victimDir = ctx.temp.path('victim');
    mkdirSync(victimDir);
    const planted = join(shared, 'work');
    symlinkSync(victimDir, planted);
    lchownSync(planted, 65534, 65534);
    for (const option of ['--rejects', '--checkpoint']) {
      const result = await publish([option, join(planted, 'out.json'), input]);
      expectRefusedBeforeSending(
        result,
        new RegExp(`${option} .*shared/work is a link owned by another user in a shared directory`),
        input,
      );
    }
    expect(readdirSync(victimDir)).toEqual([]);
    // The same link owned by this user is followed, as before.
    lchownSync(planted, process.getuid?.() ?? 0, process.getgid?.() ?? 0);
    const ok = await publish(['--rejects', join(planted, 'out.jsonl'), input]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(readdirSync(victimDir)).toEqual(['out.jsonl']);
  });
});

describe('special files are refused before anything is sent', () => {
  it('refuses a FIFO checkpoint at once instead of hanging', async () => {
    const input = writeInput();
    const fifo = ctx.temp.path('cp.fifo');
    execFileSync('mkfifo', [fifo]);
    // A CLI that opened the FIFO would hang until the test's 30 s kill: expectRefusedBeforeSending
    // finds it ended by that signal.
    const result = await publish(['--checkpoint', fifo, input]);
    expectRefusedBeforeSending(result, /--checkpoint .*cp\.fifo: is a named pipe/, input);
  });

  it.each([
    ['/dev/zero (through a link)', 'zero-link', /is a device/],
    ['/dev/stdout', '/dev/stdout', /is a device|is a named pipe|is a socket/],
    ['a directory', 'dir', /is a directory/],
    ['a link to a directory', 'dir-link', /is a directory/],
    ['a dangling link', 'dangling', /a link to a file that does not exist/],
  ])('refuses %s as --checkpoint and as --rejects', async (_name, target, message) => {
    const input = writeInput();
    symlinkSync('/dev/zero', ctx.temp.path('zero-link'));
    mkdirSync(ctx.temp.path('dir'));
    symlinkSync(ctx.temp.path('dir'), ctx.temp.path('dir-link'));
    symlinkSync(ctx.temp.path('nowhere'), ctx.temp.path('dangling'));
    const path = target.startsWith('/') ? target : ctx.temp.path(target);
    expectRefusedBeforeSending(await publish(['--checkpoint', path, input]), message, input);
    expectRefusedBeforeSending(await publish(['--rejects', path, input]), message, input);
  });

  it('refuses a socket', async () => {
    const input = writeInput();
    const socket = ctx.temp.path('s.sock');
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    try {
      expectRefusedBeforeSending(await publish(['--rejects', socket, input]), /is a socket/, input);
    } finally {
      server.close();
    }
  });

  it(`refuses a checkpoint larger than ${MAX_CHECKPOINT_BYTES} bytes without reading it`, async () => {
    const input = writeInput();
    const checkpoint = ctx.temp.path('cp.json');
    const fd = openSync(checkpoint, 'w');
    ftruncateSync(fd, MAX_CHECKPOINT_BYTES + 1); // sparse: costs no disk
    closeSync(fd);
    const result = await publish(['--checkpoint', checkpoint, input]);
    expect(result.stderr).toMatch(new RegExp(`more than the ${MAX_CHECKPOINT_BYTES} this file may hold`));
    expect(result.code).toBe(2);
    expect(ctx.emulator.mock.state.recordCount(DEMO_APP_ID)).toBe(0);
  });
});

describe('files are written 0600 and no temp file is left behind', () => {
  it('writes rejects and checkpoint 0600 under umask 000, also over an existing 0644 file', async () => {
    const input = ctx.temp.path('in.csv');
    writeFileSync(input, `${CSV_HEADER}\n${csvRows(5)}\nnot,a,valid,row\n`);
    const rejects = ctx.temp.path('r.jsonl');
    const checkpoint = ctx.temp.path('cp.json');
    writeFileSync(rejects, 'old');
    chmodSync(rejects, 0o644);
    const args = ['finance', 'publish', '--app', DEMO_APP_ID, '--rejects', rejects, '--checkpoint', checkpoint, input];
    const child = spawn('/bin/sh', ['-c', 'umask 000 && exec "$@"', 'sh', process.execPath, ctx.cli, ...args], {
      env: { PATH: process.env.PATH ?? '', ...emulatorEnv(ctx.emulator) },
      stdio: 'ignore',
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(3);
    expect(readFileSync(rejects, 'utf8')).toContain('"kind":"invalid"');
    expect(mode(rejects)).toBe(0o600);
    expect(mode(checkpoint)).toBe(0o600);
    expect(readdirSync(ctx.temp.dir).sort()).toEqual(['cp.json', 'in.csv', 'r.jsonl']);
  });

  it("removes a killed run's temp rejects file on the next run, and leaves a live run's alone", async () => {
    const input = ctx.temp.path('in.csv');
    writeFileSync(input, `${CSV_HEADER}\n${csvRows(200)}\n`);
    const rejects = ctx.temp.path('r.jsonl');
    // A temp file a live process (this test runner) might be writing: never removed.
    // The tag names this host and its pid namespace (where Linux has one), as the CLI's temp files do.
    const namespace = pidNamespace();
    const identity = namespace === undefined ? hostname() : `${hostname()}\0${namespace}`;
    const tag = createHash('sha256').update(identity).digest('hex').slice(0, 8);
    const live = `.r.jsonl.${process.pid}.${tag}.0123456789ab.tmp`;
    writeFileSync(ctx.temp.path(live), 'live');
    ctx.emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 5000 });
    const first = startCli(ctx.cli, ['finance', 'publish', '--app', DEMO_APP_ID, '--rejects', rejects, input], {
      env: emulatorEnv(ctx.emulator),
    });
    const deadline = Date.now() + 10_000;
    const killedTemp = () => readdirSync(ctx.temp.dir).filter((name) => name.endsWith('.tmp') && name !== live);
    // The rejects file's own temp, not the lock's (`.r.jsonl.lock.…`), which lives for a moment as
    // the lock is taken, before the rejects temp is made.
    const rejectsTemp = () => killedTemp().filter((name) => /^\.r\.jsonl\.\d/.test(name));
    while (rejectsTemp().length === 0 && Date.now() < deadline) await sleep(20);
    first.child.kill('SIGKILL');
    await first.done;
    const leftover = killedTemp();
    expect(leftover).toHaveLength(1);
    expect(leftover[0]).toMatch(new RegExp(`^\\.r\\.jsonl\\.${first.child.pid}\\.${tag}\\.[0-9a-f]{12}\\.tmp$`));

    ctx.emulator.mock.faults.clear();
    const second = await publish(['--rejects', rejects, input]);
    expect(second.code).toBe(0);
    expect(readdirSync(ctx.temp.dir).sort()).toEqual([live, 'in.csv', 'r.jsonl'].sort());
  });
});

describe('emulator --save', () => {
  async function runEmulator(save: string): Promise<RunResult> {
    const run = startCli(ctx.cli, ['emulator', '--port', '0', '--save', save], { timeoutMs: 60_000 });
    const deadline = Date.now() + 30_000;
    let out = '';
    run.child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    while (!out.includes('Press Ctrl+C') && run.child.exitCode === null && Date.now() < deadline) await sleep(20);
    if (!out.includes('Press Ctrl+C')) throw new Error(`the emulator showed no banner in 30 s: ${out}`);
    // Under load a SIGINT sent the instant the banner shows sometimes ended the process by the
    // signal; a moment's pause keeps this test about --save, not about start-up signals.
    await sleep(300);
    run.child.kill('SIGINT');
    return run.done;
  }

  it('writes the saved file 0600, also over an existing 0644 file', async () => {
    const save = ctx.temp.path('saved.jsonl');
    writeFileSync(save, 'old');
    chmodSync(save, 0o644);
    const result = await runEmulator(save);
    expect(result.stdout, `exit ${result.code} ${result.signal}: ${result.stderr}`).toContain('saved 0 records');
    expect(mode(save)).toBe(0o600);
    expect(readFileSync(save, 'utf8')).toBe('');
  });

  it.each([
    ['a FIFO', 'fifo', /named pipe/],
    ['a link to /dev/zero', 'zero', /is a device/],
    ['/dev/stdout', '/dev/stdout', /is a device|named pipe|socket/],
  ])('refuses %s with exit 2', async (_name, target, message) => {
    execFileSync('mkfifo', [ctx.temp.path('fifo')]);
    symlinkSync('/dev/zero', ctx.temp.path('zero'));
    const path = target.startsWith('/') ? target : ctx.temp.path(target);
    const result = await runCli(ctx.cli, ['emulator', '--port', '0', '--save', path], { timeoutMs: 10_000 });
    expect(result.stderr).toMatch(message);
    expect(result.code).toBe(2);
    expect(existsSync(ctx.temp.path('fifo'))).toBe(true);
  });
});
