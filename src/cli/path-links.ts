/**
 * Links planted by another user on the way to a file the CLI reads or writes. A glob over a shared
 * directory (`exports/*.csv`) would otherwise follow a link someone else put there to a file of
 * this user's (`~/.aws/credentials`) and upload it; an output path through `/tmp/shared ->
 * /home/victim` would write where that user chose. Both follow the path the same way, one
 * component at a time as the kernel does, and differ only in which links they distrust.
 */
import { lstatSync, readlinkSync, type Stats } from 'node:fs';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';

/** Links followed before giving up, as the kernel's ELOOP limit. */
const MAX_LINK_HOPS = 40;

/** A link on the way that must not be followed, or a path with too many links to follow. */
export type DistrustedLink =
  | { kind: 'distrusted'; link: string; owner: number }
  | { kind: 'too-many-links'; link: string };

/**
 * Follows `path` one component at a time, following each link to what it names and checking that
 * path the same way, and returns the first link `distrusts` refuses (`directory` is the directory
 * holding it). Undefined when every link on the way is trusted. A component that does not exist
 * ends the walk: opening or creating the file reports it.
 */
export function distrustedLinkOnPath(
  path: string,
  distrusts: (link: Stats, directory: string) => boolean,
): DistrustedLink | undefined {
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
    if (++hops > MAX_LINK_HOPS) return { kind: 'too-many-links', link: next };
    if (distrusts(info, current)) return { kind: 'distrusted', link: next, owner: info.uid };
    const target = readlinkSync(next);
    if (isAbsolute(target)) current = sep;
    pending = [...target.split(sep), ...pending];
  }
  return undefined;
}

/**
 * The first link on the way to `path` owned by neither this user nor root (root's links, such as
 * `/var -> private/var`, are the system's): what the CLI refuses to read through. Undefined on a
 * platform without user ids (Windows).
 */
export function foreignLinkOnPath(path: string): DistrustedLink | undefined {
  const me = process.getuid?.();
  if (me === undefined) return undefined;
  return distrustedLinkOnPath(path, (link) => link.uid !== me && link.uid !== 0);
}
