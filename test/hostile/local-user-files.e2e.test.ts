/**
 * Another local user's files at the paths a publish writes: a checkpoint, rejects file or lock
 * that someone else created first (in `/tmp`, or in a directory a group shares). Such a file says
 * what that user chose, and in a sticky directory it cannot even be replaced: the run must refuse
 * it before anything is sent. Runs as root, as CI does: only root can give a file to another user,
 * and only root can start the CLI as one.
 */
import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEMO_APP_ID } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { expectRefusedBeforeSending as expectRefused, useCliFixture } from '../support/cli/emulator.js';
import { useCliForAnotherUser } from '../support/cli/other-user.js';
import {
  CSV_HEADER,
  csvRows,
  emulatorEnv,
  type RunOptions,
  type RunResult,
  runCli,
  startCli,
} from '../support/cli/run.js';

const ctx = useCliFixture();
const INPUT = `${CSV_HEADER}\n${csvRows(30)}\n`;
/** `nobody`: a user other than the one running the CLI. */
const OTHER = 65534;

const forAnotherUser = useCliForAnotherUser();

/** The CLI, and the options that start it as `uid` when one is given (see other-user.ts). */
function cliAs(uid: number | undefined): { cli: string; options: RunOptions } {
  return uid === undefined
    ? { cli: ctx.cli, options: {} }
    : { cli: forAnotherUser().cli, options: { uid, node: forAnotherUser().node } };
}

function publish(extra: string[], { uid }: { uid?: number } = {}): Promise<RunResult> {
  const args = ['finance', 'publish', '--app', DEMO_APP_ID, '--batch-size', '10', ...extra];
  const { cli, options } = cliAs(uid);
  return runCli(cli, args, { env: emulatorEnv(ctx.emulator), timeoutMs: 30_000, ...options });
}

/** A directory like `/tmp`: sticky and world-writable. */
function sharedDirectory(): string {
  // The other user must be able to reach it through the test's own temporary directory.
  chmodSync(ctx.temp.dir, 0o755);
  const shared = ctx.temp.path('shared');
  mkdirSync(shared);
  chmodSync(shared, 0o1777);
  return shared;
}

function writeInput(directory: string): string {
  const input = join(directory, 'in.csv');
  writeFileSync(input, INPUT);
  chmodSync(input, 0o644);
  return input;
}

function expectRefusedBeforeSending(result: RunResult, message: RegExp): void {
  expectRefused(result, message, ctx.emulator);
}

/**
 * A checkpoint for `input` and the emulator's app that says the first `delivered` records were
 * sent, as another user can write for an input they can read: the fingerprint comes from a run of
 * their own against a service that is not there.
 */
async function forgedCheckpoint(input: string, delivered: number): Promise<string> {
  const own = ctx.temp.path('fingerprint.json');
  const base = ['--base-url', 'http://127.0.0.1:9', '--auth-url', 'http://127.0.0.1:9/auth'];
  await runCli(ctx.cli, ['finance', 'publish', '--app', DEMO_APP_ID, '--checkpoint', own, ...base, input], {
    env: emulatorEnv(ctx.emulator),
    timeoutMs: 30_000,
  });
  const { fingerprint } = JSON.parse(readFileSync(own, 'utf8')) as { fingerprint: string };
  expect(fingerprint).toMatch(/^sha256:/);
  return JSON.stringify({
    version: 1,
    fingerprint,
    target: { appId: DEMO_APP_ID, baseUrl: new URL(ctx.emulator.baseUrl).href },
    inputs: [{ name: input, size: INPUT.length }],
    inFlight: [],
    delivered: [[0, delivered - 1]],
    failed: [],
    unknown: [],
    complete: false,
    updatedAt: new Date().toISOString(),
  });
}

describe('files another user created at an output path', () => {
  it('refuses a checkpoint another user wrote, instead of skipping the records it says were delivered', async () => {
    const shared = sharedDirectory();
    const input = writeInput(shared);
    const planted = join(shared, 'nightly.checkpoint.json');
    writeFileSync(planted, await forgedCheckpoint(input, 20));
    chownSync(planted, OTHER, OTHER);
    const forged = readFileSync(planted, 'utf8');
    const result = await publish(['--checkpoint', planted, input]);
    expectRefusedBeforeSending(result, /--checkpoint .*nightly\.checkpoint\.json: owned by another user/);
    expect(readFileSync(planted, 'utf8')).toBe(forged);
  });

  it.each([
    // A file only written: refused where this user cannot replace it (not root, in a sticky directory).
    ['--rejects', 'r.jsonl', 'r.jsonl', OTHER - 1],
    // A file read back: refused whoever runs, root included.
    ['--checkpoint', 'cp.json', 'cp.json.lock', undefined],
  ])('refuses %s when another user created the file (%s) first', async (option, name, plantedName, uid) => {
    const shared = sharedDirectory();
    const input = writeInput(shared);
    const planted = join(shared, plantedName);
    writeFileSync(planted, 'planted\n');
    chownSync(planted, OTHER, OTHER);
    const result = await publish([option, join(shared, name), input], { uid });
    expectRefusedBeforeSending(
      result,
      new RegExp(`--${option.slice(2)}( lock)? .*${plantedName}: owned by another user`),
    );
    expect(readFileSync(planted, 'utf8')).toBe('planted\n');
  });

  it('lets root replace a rejects file another user left in /tmp: nothing of theirs is read, and root may', async () => {
    const shared = sharedDirectory();
    const input = join(shared, 'in.csv');
    writeFileSync(input, `${CSV_HEADER}\n${csvRows(20)}\nnot,a,valid,row\n`);
    const planted = join(shared, 'r.jsonl');
    writeFileSync(planted, 'planted\n');
    chownSync(planted, OTHER, OTHER);
    const result = await publish(['--rejects', planted, input]);
    expect(result.code, result.stderr).toBe(3);
    expect(readFileSync(planted, 'utf8')).toContain('"kind":"invalid"');
    expect(lstatSync(planted).uid).toBe(0);
  });

  it('refuses, run by another user, a rejects file this user left in /tmp, before sending anything', async () => {
    // Without the check the run sent every record, and only then found that the sticky directory
    // let it not replace the file: the rejected rows were lost, with exit 1.
    const shared = sharedDirectory();
    const input = writeInput(shared);
    const planted = join(shared, 'r.jsonl');
    writeFileSync(planted, 'planted\n');
    const result = await publish(['--rejects', planted, input], { uid: OTHER });
    expectRefusedBeforeSending(result, /--rejects .*r\.jsonl: owned by another user/);
  });
});

describe("the checkpoint lock's takeover claim", () => {
  it('names a takeover claim another user planted beside a stale lock, which this user cannot remove', async () => {
    // A run killed in /tmp leaves its lock; another user who then planted the takeover claim, as
    // held by a live process, kept every later run from taking the lock over, with a message
    // telling this user to delete a file the sticky bit keeps them from deleting.
    const shared = sharedDirectory();
    const input = writeInput(shared);
    const checkpoint = join(shared, 'cp.json');
    const holder = (token: string) => JSON.stringify({ pid: 1, host: hostname(), since: 'x', token });
    // pid 1 is alive; for this user's own lock a dead pid makes it stale.
    writeFileSync(`${checkpoint}.lock`, JSON.stringify({ pid: 2 ** 31 - 2, host: hostname(), since: 'x', token: 'a' }));
    writeFileSync(`${checkpoint}.lock.takeover`, holder('b'));
    chownSync(`${checkpoint}.lock.takeover`, OTHER, OTHER);
    const result = await publish(['--checkpoint', checkpoint, input]);
    expectRefusedBeforeSending(result, /--checkpoint .*cp\.json: .*cp\.json\.lock\.takeover is owned by another user/);
  });
});

describe('a name another user takes while the run goes on', () => {
  it('keeps the --rejects name from the start, so another user cannot take it before the rename', async () => {
    // The rejects file is renamed into place at the end; another user who waited for the run's
    // temp file to appear and then created the name made that rename fail in a sticky directory:
    // every record sent, the rejected rows lost, exit 1.
    const shared = sharedDirectory();
    const input = join(shared, 'in.csv');
    writeFileSync(input, `${CSV_HEADER}\n${csvRows(20)}\nnot,a,valid,row\n`);
    chmodSync(input, 0o644);
    const rejects = join(shared, 'r.jsonl');
    ctx.emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 1500 });
    const asOther = cliAs(OTHER);
    const run = startCli(asOther.cli, ['finance', 'publish', '--app', DEMO_APP_ID, '--rejects', rejects, input], {
      env: emulatorEnv(ctx.emulator),
      timeoutMs: 30_000,
      ...asOther.options,
    });
    const deadline = Date.now() + 10_000;
    // The rejects file's own temp, made once its name is held; not the lock's (`.r.jsonl.lock.…`),
    // which lives for a moment before, as the lock is taken.
    const started = () => readdirSync(shared).some((name) => /^\.r\.jsonl\.\d/.test(name));
    while (!started() && Date.now() < deadline) await sleep(10);
    expect(started()).toBe(true);
    let taken = true;
    try {
      symlinkSync('/nonexistent', rejects);
    } catch {
      taken = false;
    }
    const result = await run.done;
    expect(taken).toBe(false);
    expect(result.code, result.stderr).toBe(3);
    expect(readFileSync(rejects, 'utf8')).toContain('"kind":"invalid"');
    expect(lstatSync(rejects).uid).toBe(OTHER);
  });

  it("keeps the emulator's --save name from the start, so the records it received are saved on stop", async () => {
    const shared = sharedDirectory();
    const save = join(shared, 'received.jsonl');
    const asOther = cliAs(OTHER);
    const run = startCli(asOther.cli, ['emulator', '--port', '0', '--save', save], {
      timeoutMs: 30_000,
      ...asOther.options,
    });
    let out = '';
    run.child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const deadline = Date.now() + 20_000;
    while (!out.includes('Press Ctrl+C') && run.child.exitCode === null && Date.now() < deadline) await sleep(20);
    expect(out).toContain('Press Ctrl+C');
    let taken = true;
    try {
      symlinkSync('/nonexistent', save);
    } catch {
      taken = false;
    }
    await sleep(300); // a SIGINT at the banner's instant may end the process by the signal
    run.child.kill('SIGINT');
    const result = await run.done;
    expect(taken).toBe(false);
    expect(result.stdout, result.stderr).toContain('saved 0 records');
    expect(lstatSync(save).uid).toBe(OTHER);
  });
});

describe('a checkpoint in a directory other users may change', () => {
  it.each([
    [0o775, true],
    [0o757, true],
    [0o755, false],
    [0o1777, false],
  ])('mode %o: a note that others could move the checkpoint is shown: %s', async (mode, noted) => {
    chmodSync(ctx.temp.dir, 0o755);
    const directory = ctx.temp.path(`cp-${mode.toString(8)}`);
    mkdirSync(directory);
    chmodSync(directory, mode);
    const input = writeInput(directory);
    const result = await publish(['--checkpoint', join(directory, 'cp.json'), input]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr.includes('lets other users move or replace the checkpoint')).toBe(noted);
  });
});
