/**
 * Whose lock may be taken over: a holder's pid is checked only where it means that process, on
 * this host and in this pid namespace. The races between real runs are in
 * checkpoint-lock.e2e.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, linkSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireCheckpointLock, acquireRunFileLock } from '../../src/cli/run-file-lock.js';
import { makeTempDir } from '../support/cli/run.js';

let temp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  temp = makeTempDir();
});
afterEach(() => {
  temp.remove();
});

/** The pid of a process that has ended: nothing runs under it (until the system reuses it). */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid as number;
}

/** This process's pid namespace, where the platform has one to read. */
function ourNamespace(): string | undefined {
  return existsSync('/proc/self/ns/pid') ? readlinkSync('/proc/self/ns/pid') : undefined;
}

describe('a lock left on this host', () => {
  it('is not taken over when its holder ran in another pid namespace (a container with this host name)', () => {
    const checkpoint = temp.path('cp.json');
    const lock = `${checkpoint}.lock`;
    // A live run in the other container: its pid names nothing in this namespace, so it looks dead.
    const other = {
      pid: deadPid(),
      host: hostname(),
      since: '2026-01-01T00:00:00.000Z',
      token: 'other-container',
      pidNamespace: 'pid:[1]',
    };
    writeFileSync(lock, JSON.stringify(other));
    if (ourNamespace() === undefined) {
      // No namespace here to tell it from ours: the holder is checked by its pid, as before.
      acquireCheckpointLock(checkpoint).release();
      return;
    }
    expect(() => acquireCheckpointLock(checkpoint)).toThrow(
      `(pid ${other.pid} on ${hostname()}, since 2026-01-01T00:00:00.000Z); wait for it to end; it runs in another pid namespace (pid:[1], another container with this host name), where its process cannot be checked from here: if it is no longer running, delete ${lock}`,
    );
    expect(JSON.parse(readFileSync(lock, 'utf8'))).toEqual(other);
  });

  it('is taken over when its holder ran in this pid namespace and is gone', () => {
    const checkpoint = temp.path('cp.json');
    const lock = `${checkpoint}.lock`;
    const namespace = ourNamespace();
    const gone = {
      pid: deadPid(),
      host: hostname(),
      since: '2026-01-01T00:00:00.000Z',
      token: 'killed-run',
      ...(namespace === undefined ? {} : { pidNamespace: namespace }),
    };
    writeFileSync(lock, JSON.stringify(gone));
    const held = acquireCheckpointLock(checkpoint);
    const holder = JSON.parse(readFileSync(lock, 'utf8'));
    expect(holder).toMatchObject({ pid: process.pid, host: hostname() });
    expect(holder.pidNamespace).toBe(namespace);
    held.release();
    expect(existsSync(lock)).toBe(false);
  });

  it('is taken over when it names no namespace (written by an earlier version) and its holder is gone', () => {
    const checkpoint = temp.path('cp.json');
    const lock = `${checkpoint}.lock`;
    writeFileSync(lock, JSON.stringify({ pid: deadPid(), host: hostname(), since: 'then', token: 'old' }));
    const held = acquireCheckpointLock(checkpoint);
    expect(JSON.parse(readFileSync(lock, 'utf8')).pid).toBe(process.pid);
    held.release();
  });
});

describe("a rejects file's lock", () => {
  it('names the rejects file and its lock when another run holds it', () => {
    const rejects = temp.path('rejects.jsonl');
    const lock = `${rejects}.lock`;
    const foreign = { pid: 4242, host: 'build-7.example', since: '2026-01-01T00:00:00.000Z', token: 'x' };
    writeFileSync(lock, JSON.stringify(foreign));
    expect(() => acquireRunFileLock(rejects, '--rejects')).toThrow(
      `--rejects ${rejects} is in use by another push-api run (pid 4242 on build-7.example, since 2026-01-01T00:00:00.000Z); wait for it to end; if it is no longer running on build-7.example, delete ${lock}`,
    );
    expect(JSON.parse(readFileSync(lock, 'utf8'))).toEqual(foreign);
  });

  it('says which file an unreadable lock guards', () => {
    const rejects = temp.path('rejects.jsonl');
    writeFileSync(`${rejects}.lock`, 'not a lock');
    expect(() => acquireRunFileLock(rejects, '--rejects')).toThrow(
      `--rejects ${rejects} is locked by ${rejects}.lock, which is not a lock file this version can read; if no other push-api run uses this rejects file, delete the lock file`,
    );
  });

  it('is taken on a rejects file with several names (each run renames its own file over one name)', () => {
    const rejects = temp.path('rejects.jsonl');
    writeFileSync(rejects, '');
    linkSync(rejects, temp.path('backup.jsonl'));
    const held = acquireRunFileLock(rejects, '--rejects');
    expect(JSON.parse(readFileSync(`${rejects}.lock`, 'utf8')).pid).toBe(process.pid);
    held.release();
    expect(existsSync(`${rejects}.lock`)).toBe(false);
    // A checkpoint with two names is still refused: two runs would each read one of them.
    const checkpoint = temp.path('cp.json');
    writeFileSync(checkpoint, '{}');
    linkSync(checkpoint, temp.path('cp-2.json'));
    expect(() => acquireCheckpointLock(checkpoint)).toThrow(`--checkpoint ${checkpoint} has 2 hard links`);
  });
});
