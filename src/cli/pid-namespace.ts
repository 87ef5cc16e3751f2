import { readlinkSync } from 'node:fs';

let cached: { value: string | undefined } | undefined;

/**
 * The pid namespace this process runs in, as Linux names it (`pid:[4026531836]`), or undefined
 * where there is none to read (macOS, Windows, a /proc that is not mounted). Containers on one
 * machine can share its host name (host networking, a fixed `--hostname`, a job on the host and
 * one in a container) while each numbers its processes on its own: a process id says which
 * process it is only inside its namespace, so another namespace's pid cannot be checked from here.
 */
export function pidNamespace(): string | undefined {
  if (cached === undefined) {
    let value: string | undefined;
    try {
      value = readlinkSync('/proc/self/ns/pid');
    } catch {
      value = undefined;
    }
    cached = { value };
  }
  return cached.value;
}
