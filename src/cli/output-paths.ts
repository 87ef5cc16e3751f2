import { lstatSync, realpathSync, type Stats, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { UsageError } from './exit-codes.js';
import { ownedByAnotherUser, replaceable } from './files.js';
import { distrustedLinkOnPath } from './path-links.js';

/** A file the CLI will write, as the user named it and as it resolves. */
export interface OutputPath {
  /** The option that named it, for messages: `--rejects`, `--checkpoint`, `--save`. */
  option: string;
  /** As given on the command line, for messages. */
  given: string;
  /** Every link followed: where the file is really written. */
  resolved: string;
}

/** The identity of a file: two paths with the same identity are one file, however spelled or linked. */
interface FileIdentity {
  dev: number | bigint;
  ino: number | bigint;
}

function sameFile(a: FileIdentity | undefined, b: FileIdentity | undefined): boolean {
  return a !== undefined && b !== undefined && a.dev === b.dev && a.ino === b.ino && a.ino !== 0;
}

function kindOf(info: Stats): string {
  if (info.isDirectory()) return 'a directory';
  if (info.isFIFO()) return 'a named pipe (FIFO)';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

/**
 * Follows the directory part of an output path, as the kernel would, and refuses a link it would
 * refuse under `fs.protected_symlinks`: one in a sticky, world-writable directory (`/tmp`) owned
 * neither by this user nor by the directory's owner. Checking only the last component let a link
 * planted as a directory (`/tmp/shared -> /home/victim`) redirect the write, where the kernel's
 * protection is off (containers, some distributions).
 */
function checkDirectoryLinks(option: string, given: string, directory: string): void {
  const me = process.getuid?.();
  if (me === undefined) return;
  const found = distrustedLinkOnPath(directory, (link, holder) => {
    const parent = lstatSync(holder);
    const shared = (parent.mode & 0o1002) === 0o1002;
    return shared && link.uid !== me && link.uid !== parent.uid;
  });
  if (found?.kind === 'too-many-links') throw new UsageError(`${option} ${given}: too many links in the path`);
  if (found !== undefined) {
    throw new UsageError(
      `${option} ${given}: ${found.link} is a link owned by another user in a shared directory; name the real directory`,
    );
  }
}

/**
 * Resolves a path the CLI is about to write: it must be a regular file (it is replaced, never
 * written through) or a name that does not exist yet in an existing directory. A link of this user
 * is followed to what it names, so the file written is the one the link points to; a link to
 * nothing, to a directory, a FIFO, a socket or a device (`/dev/stdout`, `/dev/zero`), or a link
 * owned by another user is refused with exit 2.
 */
export function resolveOutputPath(
  option: string,
  given: string,
  { readBack = false }: { readBack?: boolean } = {},
): OutputPath & { identity: FileIdentity | undefined } {
  const absolute = resolve(given);
  checkDirectoryLinks(option, given, dirname(absolute));
  let link: Stats | undefined;
  try {
    link = lstatSync(absolute);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new UsageError(`${option} ${given}: cannot use this path (${(error as NodeJS.ErrnoException).code})`);
    }
  }
  if (link === undefined) {
    // A new file: where it lands is its directory's real path plus its name.
    let directory: string;
    try {
      directory = realpathSync(dirname(absolute));
    } catch {
      throw new UsageError(`${option} ${given}: cannot write there: the directory ${dirname(given)} does not exist`);
    }
    if (!statSync(directory).isDirectory())
      throw new UsageError(`${option} ${given}: ${dirname(given)} is not a directory`);
    return { option, given, resolved: join(directory, basename(absolute)), identity: undefined };
  }
  // A link someone else planted (in a shared directory such as /tmp) must not redirect our write
  // to a file of theirs choosing: only links this user owns are followed.
  if (link.isSymbolicLink() && process.getuid !== undefined && link.uid !== process.getuid()) {
    throw new UsageError(`${option} ${given}: a link owned by another user; name the file itself`);
  }
  let info: Stats;
  try {
    info = statSync(absolute);
  } catch {
    throw new UsageError(`${option} ${given}: a link to a file that does not exist; remove the link or name the file`);
  }
  // Checked before the real path: `/dev/stdout` can lead to a pipe, which has no path at all.
  if (!info.isFile()) throw new UsageError(`${option} ${given}: is ${kindOf(info)}; name a regular file`);
  const resolved = realpathSync(absolute);
  // Another user's file: what a file read back says was chosen by them (a checkpoint listing
  // records as delivered makes a run skip them), and one this user cannot replace (in a sticky
  // directory such as /tmp) would fail the run only after its records were sent.
  if (process.getuid !== undefined && info.uid !== process.getuid()) {
    if (readBack || !replaceable(statSync(dirname(resolved)), info))
      throw new UsageError(ownedByAnotherUser(option, given));
  }
  return { option, given, resolved, identity: { dev: info.dev, ino: info.ino } };
}

function inputIdentity(path: string): FileIdentity | undefined {
  try {
    const info = statSync(path);
    return { dev: info.dev, ino: info.ino };
  } catch {
    return undefined; // a missing input is reported by the reader
  }
}

/**
 * Checks every file a run will write before anything is sent: none may be one of the inputs (the
 * data would be replaced), and no two may be the same file (one would overwrite the other),
 * whatever the spelling: `./x`, `a/../x`, a symbolic link or a hard link. Returns the resolved
 * paths in the order given; an option left undefined is skipped.
 */
export function checkOutputPaths(
  inputs: readonly string[],
  outputs: readonly { option: string; path: string | undefined; readBack?: boolean }[],
): OutputPath[] {
  const checked: ReturnType<typeof resolveOutputPath>[] = [];
  const inputFiles = inputs.filter((path) => path !== '-').map((path) => ({ path, identity: inputIdentity(path) }));
  for (const { option, path, readBack } of outputs) {
    if (path === undefined) continue;
    const output = resolveOutputPath(option, path, { readBack });
    for (const input of inputFiles) {
      if (sameFile(output.identity, input.identity)) {
        throw new UsageError(`${option} ${path} is the input file ${input.path}: writing it would destroy the input`);
      }
    }
    for (const other of checked) {
      if (other.resolved === output.resolved || sameFile(other.identity, output.identity)) {
        throw new UsageError(`${option} ${path} and ${other.option} ${other.given} are the same file; name two files`);
      }
    }
    checked.push(output);
  }
  return checked.map(({ option, given, resolved }) => ({ option, given, resolved }));
}
