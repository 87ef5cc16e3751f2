/**
 * Whose lock may be taken over: a holder's pid is checked only where it means that process, on
 * this host and in this pid namespace. The races between real runs are in
 * checkpoint-lock.e2e.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireCheckpointLock } from '../../src/cli/checkpoint-lock.js';
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
