import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsync as fsyncCallback,
  fsyncSync,
  lstatSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  type Stats,
  statSync,
  unlinkSync,
  write as writeCallback,
  writeSync,
} from 'node:fs';
import { open } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { UsageError } from './exit-codes.js';
import { pidNamespace } from './pid-namespace.js';

/** Every file the CLI writes is readable by its owner alone, whatever the umask. */
const FILE_MODE = 0o600;

/**
 * Whether written files are flushed to the disk before they replace the old ones. Off only for the
 * benchmark that measures what the flush costs; not a documented setting.
 */
function fsyncEnabled(): boolean {
  return process.env.PUSH_CHECKPOINT_FSYNC !== '0';
}

/**
 * Short, file-name-safe tag of this machine and pid namespace: a temp file's pid means nothing on
 * another host, nor in another container of this one (see pid-namespace.ts).
 */
const HOST_TAG = hostTag();

function hostTag(): string {
  const namespace = pidNamespace();
  const identity = namespace === undefined ? hostname() : `${hostname()}\0${namespace}`;
  return createHash('sha256').update(identity).digest('hex').slice(0, 8);
}

/** Temp files this process created and has not renamed or removed yet. */
const liveTemps = new Set<string>();
/** Empty files this process created to hold a target's name, not yet replaced by the file itself. */
const heldNames = new Set<string>();
/** Directories and targets already swept for temp files of earlier runs. */
const swept = new Set<string>();

// A run that ends by `process.exit` (an error, a signal handler) leaves no temp file behind.
// SIGKILL does: the next run removes those (see sweepStaleTemps).
process.on('exit', () => {
  for (const path of liveTemps) {
    try {
      unlinkSync(path);
    } catch {
      // already gone
    }
  }
  // The run ended before its file was put in place: the file is missing, as if never held.
  for (const path of heldNames) {
    try {
      const info = lstatSync(path);
      if (info.isFile() && info.size === 0) unlinkSync(path);
    } catch {
      // already gone
    }
  }
});

function tempPattern(target: string): RegExp {
  const name = basename(target).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^\\.${name}\\.(\\d+)\\.([0-9a-f]{8})\\.[0-9a-f]{12}\\.tmp$`);
}

/** Whether a process with this id runs on this machine (EPERM: it runs, as another user). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the temp files that earlier runs on this machine left beside `target` when they were
 * killed: those whose process is gone, and those carrying this process's own id that it did not
 * create (a container often gives every run the same pid). A live run's temp file is left alone.
 */
function sweepStaleTemps(target: string): void {
  if (swept.has(target)) return;
  swept.add(target);
  const pattern = tempPattern(target);
  let names: string[];
  try {
    names = readdirSync(dirname(target));
  } catch {
    return;
  }
  for (const name of names) {
    const match = pattern.exec(name);
    if (match === null || match[2] !== HOST_TAG) continue;
    const path = join(dirname(target), name);
    const pid = Number(match[1]);
    const stale = pid === process.pid ? !liveTemps.has(path) : !isProcessAlive(pid);
    if (!stale) continue;
    try {
      unlinkSync(path);
    } catch {
      // another run removed it first
    }
  }
}

export interface TempFile {
  path: string;
  fd: number;
  /** The descriptor was closed: it is never closed twice (its number may belong to another file by then). */
  closed?: boolean;
}

/** Closes a temp file's descriptor once, however many paths reach here (a failed rename, then the discard). */
function closeTemp(temp: TempFile): void {
  if (temp.closed === true) return;
  temp.closed = true;
  closeSync(temp.fd);
}

/**
 * A new file beside `target`, created exclusively (`wx`, so it cannot be a link planted in advance
 * and no other run writes to it) and set to 0600. Its name carries this process's id and host, so
 * that the next run can tell a killed run's leftover from a live run's file. Renamed over `target`
 * when done, by {@link commitTemp}.
 */
export function createTempBeside(target: string, option: string): TempFile {
  let info: ReturnType<typeof statSync> | undefined;
  try {
    info = statSync(target);
  } catch {
    info = undefined;
  }
  if (info?.isDirectory()) throw new UsageError(`${option} ${target}: is a directory, not a file`);
  sweepStaleTemps(target);
  const name = `.${basename(target)}.${process.pid}.${HOST_TAG}.${randomBytes(6).toString('hex')}.tmp`;
  const path = join(dirname(target), name);
  let fd: number;
  try {
    fd = openSync(path, 'wx', FILE_MODE);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new UsageError(`${option} ${target}: cannot write there (${code})`);
  }
  liveTemps.add(path);
  try {
    // The umask can only narrow the mode `open` was given; this makes it exactly 0600.
    fchmodSync(fd, FILE_MODE);
  } catch {
    // a file system without modes (some Windows volumes)
  }
  return { path, fd };
}

/**
 * Holds the name `target` for this run when nothing is there yet: an empty file of this user's,
 * created exclusively, which the temp file replaces when the run ends. Without it, another user
 * could create the name in a sticky directory (`/tmp`) once the run's temp file appeared, and the
 * rename would fail (EPERM) after every record was sent. An existing file stays as it is
 * (resolveOutputPath found it to be this user's); one that appeared since must be this user's too.
 */
export function holdName(target: string, option: string): void {
  let fd: number;
  try {
    fd = openSync(target, 'wx', FILE_MODE);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    if (code !== 'EEXIST') throw new UsageError(`${option} ${target}: cannot write there (${code})`);
    let found: Stats;
    let directory: Stats;
    try {
      found = lstatSync(target);
      directory = statSync(dirname(target));
    } catch {
      return; // removed in between: the rename creates it
    }
    if (!replaceable(directory, found)) throw new UsageError(ownedByAnotherUser(option, target));
    return;
  }
  closeSync(fd);
  heldNames.add(target);
}

/** Flushes a directory entry change (a rename) to the disk, where the platform allows it. */
function fsyncDirectory(directory: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(directory, 'r');
    fsyncSync(fd);
  } catch {
    // Windows cannot open or flush a directory (EISDIR, EPERM, EINVAL): the rename is what it offers.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Makes a written temp file the new `target`: the data reaches the disk before the rename, and
 * the rename before this returns, so a power loss leaves either the old file or the new one,
 * never an empty one. The descriptor is closed here.
 */
export function commitTemp(temp: TempFile, target: string): void {
  const sync = fsyncEnabled();
  if (sync) fsyncSync(temp.fd);
  closeTemp(temp);
  renameSync(temp.path, target);
  liveTemps.delete(temp.path);
  heldNames.delete(target);
  if (sync) fsyncDirectory(dirname(target));
}

/** Closes and removes a temp file that will not be committed. */
export function discardTemp(temp: TempFile): void {
  try {
    closeTemp(temp);
  } catch {
    // the close itself failed (EIO): the descriptor is released all the same
  }
  try {
    unlinkSync(temp.path);
  } catch {
    // already renamed or gone
  }
  liveTemps.delete(temp.path);
}

/** Writes `text` to `target` atomically and durably: a crash mid-write leaves the previous file, never half a file. */
export function writeFileAtomically(target: string, text: string, option: string): void {
  const temp = createTempBeside(target, option);
  try {
    writeSync(temp.fd, text);
    commitTemp(temp, target);
  } catch (error) {
    discardTemp(temp);
    throw error;
  }
}

/**
 * Why a file with more than one name is refused where one run at a time must own it: its lock is
 * taken by name, so a run using another name of the same file would not see the lock.
 */
export function hardLinkedMessage(option: string, path: string, links: number): string {
  return (
    `${option} ${path} has ${links} hard links: another name for the same file would let a second run ` +
    'use it at the same time; give each run its own file (copy it, or remove the other names)'
  );
}

/** The sticky bit of a directory's mode: in such a directory (`/tmp`) only owners remove or replace a file. */
const STICKY = 0o1000;

/**
 * Whether this user may put a file of its own in place of `file` by a rename in `directory` (whose
 * write permission the run's temp file tests): root may; in a sticky directory only the file's or
 * the directory's owner may.
 */
export function replaceable(directory: Stats, file: Stats): boolean {
  const me = process.getuid?.();
  if (me === undefined || me === 0 || file.uid === me) return true;
  return (directory.mode & STICKY) === 0 || directory.uid === me;
}

/**
 * Whether users other than the owner may remove or rename entries of `directory`: it is writable
 * by its group or by everyone, and not sticky. Such a user can move a checkpoint away, and the next
 * run, finding none, sends every record again.
 */
export function othersMayMoveFilesIn(directory: Stats): boolean {
  return (directory.mode & 0o022) !== 0 && (directory.mode & STICKY) === 0;
}

/**
 * Why a file another user created is refused where the CLI writes (also through a link of this
 * user's): a file read back says what that user chose (a checkpoint listing records as delivered
 * makes a run skip them), and one in a sticky directory such as `/tmp` this user cannot replace,
 * which a run would find out only after sending its records.
 */
export function ownedByAnotherUser(option: string, path: string): string {
  return `${option} ${path}: owned by another user; name a file of your own, or remove this one`;
}

/**
 * Reads a small file the CLI wrote earlier (a checkpoint, a lock) with a bound: opened without
 * blocking (a FIFO put in its place must not hang the run), refused unless it is a regular file,
 * and never read past `maxBytes` (a link to `/dev/zero` must not eat memory). Undefined when the
 * file does not exist.
 */
export function readBoundedFile(
  path: string,
  maxBytes: number,
  option: string,
  { singleLink = false, ownOnly = false } = {},
): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new UsageError(`${option} ${path}: cannot read file (${code ?? 'error'})`);
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw new UsageError(`${option} ${path}: not a regular file`);
    if (singleLink && info.nlink > 1) throw new UsageError(hardLinkedMessage(option, path, info.nlink));
    // Checked again on the file opened: another user may create it after the path was checked.
    if (ownOnly && process.getuid !== undefined && info.uid !== process.getuid()) {
      throw new UsageError(ownedByAnotherUser(option, path));
    }
    if (info.size > maxBytes) {
      throw new UsageError(`${option} ${path}: ${info.size} bytes, more than the ${maxBytes} this file may hold`);
    }
    const buffer = Buffer.alloc(Math.min(maxBytes + 1, info.size + 1));
    let length = 0;
    while (length < buffer.length) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
    }
    if (length > maxBytes || length > info.size) {
      throw new UsageError(`${option} ${path}: the file grew while it was read; is another program writing it?`);
    }
    return buffer.toString('utf8', 0, length);
  } finally {
    closeSync(fd);
  }
}

const writeAsync = promisify(writeCallback);
const fsyncAsync = promisify(fsyncCallback);

/** {@link fsyncDirectory} off the main thread. */
async function fsyncDirectoryAsync(directory: string): Promise<void> {
  const handle = await open(directory, 'r').catch(() => undefined);
  if (handle === undefined) return; // Windows: see fsyncDirectory
  try {
    await handle.sync();
  } catch {
    // as in fsyncDirectory
  } finally {
    await handle.close();
  }
}

/**
 * {@link writeFileAtomically} with the write and the flushes off the main thread, so that the
 * run goes on while the disk works. `superseded` is asked, on the main thread, right before the
 * rename: when a newer version has been written meanwhile, this one is dropped rather than renamed
 * over it. Resolves to whether it was renamed into place.
 */
export async function writeFileAtomicallyInBackground(
  target: string,
  text: string,
  option: string,
  superseded: () => boolean,
): Promise<boolean> {
  const temp = createTempBeside(target, option);
  try {
    const data = Buffer.from(text);
    let written = 0;
    while (written < data.length) written += (await writeAsync(temp.fd, data, written)).bytesWritten;
    const sync = fsyncEnabled();
    if (sync) await fsyncAsync(temp.fd);
    if (superseded()) {
      discardTemp(temp);
      return false;
    }
    closeTemp(temp);
    renameSync(temp.path, target);
    liveTemps.delete(temp.path);
    if (sync) await fsyncDirectoryAsync(dirname(target));
    return true;
  } catch (error) {
    discardTemp(temp);
    throw error;
  }
}
