/**
 * Finds a symbolic link another user planted on the way to a file the CLI is about to read and
 * send. A glob over a shared directory (`exports/*.csv`) would otherwise follow a link someone
 * else put there to a file of this user's (`~/.aws/credentials`), and upload it.
 */
import { lstatSync, readlinkSync, type Stats } from 'node:fs';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';

/** Links followed before giving up, as the kernel's ELOOP limit. */
const MAX_LINK_HOPS = 40;

/** Why a path must not be read: a link another user owns, or too many links to follow. */
export interface ForeignLink {
  /** The link, as reached by following the path from the root. */
  link: string;
  /** Its owner's user id; undefined when the path had too many links to follow. */
  owner: number | undefined;
}

/**
 * Follows `path` one component at a time, as the kernel does, and returns the first link owned by
 * neither this user nor root (root's links, such as `/var -> private/var`, are the system's). A
 * link this user owns is followed, and the path it names is checked the same way. Undefined when
 * every link on the way is trusted, or on a platform without user ids (Windows). A component that
 * does not exist ends the walk: opening the file reports it.
 */
export function foreignLinkOnPath(path: string): ForeignLink | undefined {
  const me = process.getuid?.();
  if (me === undefined) return undefined;
  let pending = resolve(path).split(sep);
  let current: string = sep;
  for (let hops = 0; pending.length > 0; ) {
    const name = pending.shift() as string;
    if (name === '' || name === '.') continue;
    if (name === '..') {
      current = dirname(current);
      continue;
    }
    const next = join(current, name);
    let info: Stats;
    try {
      info = lstatSync(next);
    } catch {
      return undefined;
    }
    if (!info.isSymbolicLink()) {
      current = next;
      continue;
    }
    if (info.uid !== me && info.uid !== 0) return { link: next, owner: info.uid };
    if (++hops > MAX_LINK_HOPS) return { link: next, owner: undefined };
    const target = readlinkSync(next);
    if (isAbsolute(target)) current = sep;
    pending = [...target.split(sep), ...pending];
  }
  return undefined;
}
