import { randomBytes } from 'node:crypto';
import { linkSync, lstatSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { UsageError } from './exit-codes.js';
import {
  createTempBeside,
  discardTemp,
  hardLinkedMessage,
  isProcessAlive,
  ownedByAnotherUser,
  readBoundedFile,
} from './files.js';
import { pidNamespace } from './pid-namespace.js';

/** A lock file is a few dozen bytes; anything larger is not one of ours. */
const MAX_LOCK_BYTES = 4096;
/** Rounds of "another run changed the lock first"; each round is a few system calls, or a 5 ms pause. */
const MAX_ATTEMPTS = 20;

/** Who holds a run's file: written into the lock file, shown to a second run. */
interface LockHolder {
  pid: number;
  host: string;
  since: string;
  /** Tells this holder's lock file from a later one at the same path. */
  token: string;
  /** The holder's pid namespace, where it has one (absent in locks of earlier versions). */
  pidNamespace?: string;
}

/** The files a run locks: its checkpoint, which it reads and rewrites, and its rejects file. */
export type LockedOption = '--checkpoint' | '--rejects';

/** How a lock's messages name the file it guards. */
const NOUNS: Record<LockedOption, string> = { '--checkpoint': 'checkpoint', '--rejects': 'rejects file' };

export interface RunFileLock {
  /** The lock file: the guarded file's path with `.lock` appended. */
  readonly path: string;
  /** Removes the lock file if it is still this run's. Safe to call more than once. */
  release(): void;
}

/** The lock file that guards a checkpoint or rejects file. */
export function lockPathFor(target: string): string {
  return `${target}.lock`;
}

function readHolder(path: string): LockHolder | 'missing' | 'unreadable' {
  let text: string | undefined;
  try {
    text = readBoundedFile(path, MAX_LOCK_BYTES, 'lock file');
  } catch {
    return 'unreadable';
  }
  if (text === undefined) return 'missing';
  try {
    const value = JSON.parse(text) as Partial<LockHolder>;
    if (
      Number.isSafeInteger(value.pid) &&
      typeof value.host === 'string' &&
      typeof value.since === 'string' &&
      typeof value.token === 'string' &&
      (value.pidNamespace === undefined || typeof value.pidNamespace === 'string')
    ) {
      return value as LockHolder;
    }
  } catch {
    // not JSON
  }
  return 'unreadable';
}

function describe(holder: LockHolder): string {
  return `pid ${holder.pid} on ${holder.host}, since ${holder.since}`;
}

/**
 * Whether the holder's pid can be looked up from here: it ran on this host, in this pid namespace.
 * Two containers with one host name (host networking, a fixed `--hostname`) number their processes
 * each on its own, so a live run in the other one looks gone from here, and taking its lock over
 * would let both send the same records. A lock of an earlier version names no namespace.
 */
function isCheckableHere(holder: LockHolder): boolean {
  if (holder.host !== hostname()) return false;
  const ours = pidNamespace();
  return holder.pidNamespace === undefined || ours === undefined || holder.pidNamespace === ours;
}

/**
 * A lock is stale when its holder ran here (see isCheckableHere) and is gone. The holder's own pid
 * counts as gone: this process has not taken the lock yet, so a file naming it was left by an
 * earlier run that had the same pid (containers often give every run the same one).
 */
function isStale(holder: LockHolder): boolean {
  if (!isCheckableHere(holder)) return false;
  return holder.pid === process.pid || !isProcessAlive(holder.pid);
}

/** What to do about a live holder, or one this machine cannot check. */
function remedyFor(holder: LockHolder, path: string): string {
  if (isCheckableHere(holder)) return 'wait for it to end';
  if (holder.host !== hostname()) {
    return `wait for it to end; if it is no longer running on ${holder.host}, delete ${path}`;
  }
  return (
    `wait for it to end; it runs in another pid namespace (${holder.pidNamespace}, another container ` +
    `with this host name), where its process cannot be checked from here: if it is no longer running, delete ${path}`
  );
}

/**
 * Takes the lock of a run's file so that one run at a time uses it. Two runs sharing a checkpoint
 * would each send what the file says is not delivered yet, storing records twice; two runs sharing
 * a rejects file would each rename their own over it at the end, and the first run's invalid,
 * failed and unknown records would be listed nowhere.
 *
 * The lock file is written whole under a temporary name, then hard-linked to its name: the link
 * fails if the name exists, so exactly one run gets it, and a lock file is never seen half
 * written. A lock left by a dead process on this machine is taken over through a second lock, the
 * takeover claim, taken the same way: only the claim's holder may replace the lock, and only after
 * reading it again and finding the same dead holder, so two runs never both take over one lock.
 * A lock from another machine, or from another pid namespace of this one, is never taken over: the
 * message says how to remove it. Released by {@link RunFileLock.release}, and on process exit.
 */
export function acquireRunFileLock(target: string, option: LockedOption): RunFileLock {
  const lock = takeLock(target, option);
  if (option !== '--checkpoint') return lock;
  // The lock is taken by name: a second name (a hard link) of the same checkpoint has its own lock,
  // and two runs would share the file. Refused once the lock is held, so that no run can link the
  // file between this check and the lock; Checkpoint.open checks the file it reads again. A rejects
  // file is never read: each run renames its own file over its name, and a second name keeps the old.
  let links = 1;
  try {
    links = lstatSync(target).nlink;
  } catch {
    // No checkpoint yet: a file this run creates has one name.
  }
  if (links > 1) {
    lock.release();
    throw new UsageError(hardLinkedMessage('--checkpoint', target, links));
  }
  return lock;
}

/** The checkpoint's lock: see {@link acquireRunFileLock}. */
export function acquireCheckpointLock(checkpointPath: string): RunFileLock {
  return acquireRunFileLock(checkpointPath, '--checkpoint');
}

function takeLock(target: string, option: LockedOption): RunFileLock {
  const path = lockPathFor(target);
  const noun = NOUNS[option];
  const namespace = pidNamespace();
  const me: LockHolder = {
    pid: process.pid,
    host: hostname(),
    since: new Date().toISOString(),
    token: randomBytes(12).toString('hex'),
    ...(namespace === undefined ? {} : { pidNamespace: namespace }),
  };
  const candidate = createTempBeside(path, option);
  const failure = (message: string) => new UsageError(`${option} ${target}: ${message}`);
  try {
    try {
      writeSync(candidate.fd, `${JSON.stringify(me)}\n`);
    } catch (error) {
      // A full disk, a quota or a file size limit: the lock is the first file a run writes, so
      // this is the path refused before anything is sent, like one that cannot be created.
      throw failure(`cannot write there (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      if (linkExclusive(candidate.path, path, failure)) return held(path, me.token);
      const holder = readHolder(path);
      if (holder === 'missing') continue; // released in between: try again
      if (holder === 'unreadable') {
        throw new UsageError(
          `${option} ${target} is locked by ${path}, which is not a lock file this version can read; ` +
            `if no other push-api run uses this ${noun}, delete the lock file`,
        );
      }
      if (!isStale(holder)) {
        // Its path was checked before the run: one another user planted since would claim a live run forever.
        if (isAnotherUsersFile(path)) throw new UsageError(ownedByAnotherUser(`${option} lock`, path));
        throw new UsageError(
          `${option} ${target} is in use by another push-api run (${describe(holder)}); ${remedyFor(holder, path)}`,
        );
      }
      if (takeOverStale(path, holder, candidate.path, { option, failure })) return held(path, me.token);
    }
    throw failure(
      `other runs keep taking the lock ${path}; try again, and if this repeats ` +
        `while no push-api run uses this ${noun}, delete ${path} and ${path}.takeover`,
    );
  } finally {
    discardTemp(candidate);
  }
}

/** How a lock's messages name what it guards. */
interface Naming {
  option: LockedOption;
  failure: (message: string) => UsageError;
}

/** Links `from` to `to` unless `to` exists; any other failure is a usage error. */
function linkExclusive(from: string, to: string, failure: Naming['failure']): boolean {
  try {
    linkSync(from, to);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    throw failure(`cannot create the lock file ${to} (${code ?? 'error'})`);
  }
}

/**
 * Replaces a dead holder's lock with ours (`candidate`, which holds our identity) under the
 * takeover claim. False when another run holds the claim or the lock changed: the caller looks again.
 */
function takeOverStale(path: string, stale: LockHolder, candidate: string, naming: Naming): boolean {
  const claim = `${path}.takeover`;
  if (!linkExclusive(candidate, claim, naming.failure)) {
    // Never a claim of a run of this user's: waiting for it, or removing it, cannot work.
    if (isAnotherUsersFile(claim)) {
      throw naming.failure(
        `${claim} is owned by another user, so the stale lock cannot be taken over; ` +
          (naming.option === '--checkpoint'
            ? 'copy the checkpoint to a directory of your own and resume from there'
            : 'write the rejects file to a directory of your own'),
      );
    }
    const claimant = readHolder(claim);
    // A claim is held for a few system calls; one left by a run killed in between is removed.
    if (typeof claimant === 'object' && isStale(claimant)) removeIfStill(claim, claimant.token);
    else pause(5);
    return false;
  }
  const ours = readHolder(claim);
  try {
    const current = readHolder(path);
    if (typeof current !== 'object' || current.token !== stale.token) return false;
    // Planted by another user since its path was checked: a sticky directory refuses the rename (EPERM).
    if (isAnotherUsersFile(path)) throw new UsageError(ownedByAnotherUser(`${naming.option} lock`, path));
    renameSync(candidate, path);
    return true;
  } finally {
    // Never remove a claim that is no longer ours (removed as stale, and taken by another run).
    if (typeof ours === 'object') removeIfStill(claim, ours.token);
  }
}

/**
 * Whether another user owns the file at `path`: in a sticky directory such as `/tmp` this user can
 * neither remove nor replace it.
 */
function isAnotherUsersFile(path: string): boolean {
  const me = process.getuid?.();
  if (me === undefined) return false;
  try {
    return lstatSync(path).uid !== me;
  } catch {
    return false; // removed in between: the next round looks again
  }
}

/**
 * Removes the file at `path` if it still holds `token`: moved aside by rename (one mover per
 * file), checked, and put back if what was moved is another run's file taken in between.
 */
function removeIfStill(path: string, token: string): void {
  const aside = `${path}.${process.pid}-${randomBytes(6).toString('hex')}`;
  try {
    renameSync(path, aside);
  } catch {
    return; // another run moved or removed it first
  }
  const moved = readHolder(aside);
  if (typeof moved === 'object' && moved.token !== token) {
    try {
      linkSync(aside, path);
    } catch {
      // Another run took the name in the instant between: its file stands.
    }
  }
  try {
    unlinkSync(aside);
  } catch {
    // gone already
  }
}

/** Blocks for a few milliseconds: acquiring the lock is synchronous, and short. */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function held(path: string, token: string): RunFileLock {
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    process.off('exit', release);
    const holder = readHolder(path);
    // Never remove a lock that is no longer ours (deleted by hand and taken by another run).
    if (holder === 'missing' || holder === 'unreadable' || holder.token !== token) return;
    try {
      unlinkSync(path);
    } catch {
      // removed by hand
    }
  };
  process.on('exit', release);
  return { path, release };
}
