/**
 * Files another user created where the CLI writes, seen from a user id other than the file's: the
 * checks that test/hostile/local-user-files.e2e.test.ts makes with a real second user (as root),
 * made here for whoever runs the tests.
 */
import { chmodSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { holdName } from '../../src/cli/files.js';
import { resolveOutputPath } from '../../src/cli/output-paths.js';
import { acquireCheckpointLock } from '../../src/cli/run-file-lock.js';
import { makeTempDir } from '../support/cli/run.js';

let temp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  temp = makeTempDir();
});
afterEach(() => {
  vi.restoreAllMocks();
  temp.remove();
});

/** From here on, this process runs as a user other than the owner of `path`. */
function becomeAnotherUserThan(path: string): void {
  const owner = statSync(path).uid;
  vi.spyOn(process, 'getuid').mockReturnValue(owner + 1);
}

describe('an existing file of another user at an output path', () => {
  it('is refused where this user cannot replace it (a sticky directory), naming the option', () => {
    chmodSync(temp.dir, 0o1777);
    const path = temp.path('r.jsonl');
    writeFileSync(path, 'theirs\n');
    expect(resolveOutputPath('--rejects', path).resolved).toBe(path);
    becomeAnotherUserThan(path);
    expect(() => resolveOutputPath('--rejects', path)).toThrow(/^--rejects .*r\.jsonl: owned by another user/);
  });

  it('is replaced where this user may (a directory without the sticky bit), unless it is read back', () => {
    const path = temp.path('cp.json');
    writeFileSync(path, '{}');
    becomeAnotherUserThan(path);
    expect(resolveOutputPath('--rejects', path).resolved).toBe(path);
    expect(() => resolveOutputPath('--checkpoint', path, { readBack: true })).toThrow(
      /^--checkpoint .*cp\.json: owned by another user/,
    );
  });
});

describe('holdName', () => {
  it('creates an empty file of this user, 0600, where nothing was', () => {
    const path = temp.path('r.jsonl');
    holdName(path, '--rejects');
    const info = statSync(path);
    expect(info.size).toBe(0);
    expect(info.mode & 0o777).toBe(0o600);
  });

  it('leaves a file it may replace as it is, and refuses one of another user in a sticky directory', () => {
    const path = temp.path('r.jsonl');
    writeFileSync(path, 'mine\n');
    holdName(path, '--rejects');
    expect(statSync(path).size).toBe(5);
    becomeAnotherUserThan(path);
    holdName(path, '--rejects');
    expect(statSync(path).size).toBe(5);
    chmodSync(temp.dir, 0o1777);
    expect(() => holdName(path, '--rejects')).toThrow(/^--rejects .*r\.jsonl: owned by another user/);
  });
});

describe('the takeover claim of a stale checkpoint lock', () => {
  it('is refused at once when another user owns it, instead of being waited on', () => {
    const checkpoint = temp.path('cp.json');
    const holder = (pid: number, token: string) => JSON.stringify({ pid, host: hostname(), since: 'x', token });
    writeFileSync(`${checkpoint}.lock`, holder(2 ** 31 - 2, 'dead')); // no such process: stale
    writeFileSync(`${checkpoint}.lock.takeover`, holder(1, 'live')); // pid 1 is alive
    becomeAnotherUserThan(`${checkpoint}.lock.takeover`);
    expect(() => acquireCheckpointLock(checkpoint)).toThrow(/\.lock\.takeover is owned by another user/);
  });
});

describe('a checkpoint lock another user planted after its path was checked', () => {
  const holder = (pid: number, token: string) => JSON.stringify({ pid, host: hostname(), since: 'x', token });

  it('is refused as theirs, not waited on as a live run of this user', () => {
    const checkpoint = temp.path('cp.json');
    writeFileSync(`${checkpoint}.lock`, holder(1, 'live')); // pid 1 is alive
    becomeAnotherUserThan(`${checkpoint}.lock`);
    expect(() => acquireCheckpointLock(checkpoint)).toThrow(
      /^--checkpoint lock .*cp\.json\.lock: owned by another user/,
    );
  });

  it('is refused as theirs, not taken over as stale: in a sticky directory the rename over it fails', () => {
    const checkpoint = temp.path('cp.json');
    writeFileSync(`${checkpoint}.lock`, holder(2 ** 31 - 2, 'dead')); // no such process: stale
    becomeAnotherUserThan(`${checkpoint}.lock`);
    expect(() => acquireCheckpointLock(checkpoint)).toThrow(
      /^--checkpoint lock .*cp\.json\.lock: owned by another user/,
    );
  });
});
