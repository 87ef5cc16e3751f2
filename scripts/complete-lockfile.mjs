#!/usr/bin/env node
// Adds lockfile records for platform-specific optional packages that npm left out.
//
// Why: the registry this project installs from does not carry every platform build of every
// version (for example @biomejs/cli-darwin-arm64@2.6.8), so `npm install` writes no record for
// them, and `npm ci` then refuses the lockfile ("Missing: … from lock file"; see npm/cli#4828).
// A record with the package's os/cpu/libc lets `npm ci` see that the package is for another
// platform and skip it, as it would skip a fully resolved one. Run after `npm install`:
//   node scripts/complete-lockfile.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const OS = ['android', 'darwin', 'freebsd', 'linux', 'openbsd', 'openharmony', 'win32', 'sunos', 'aix', 'netbsd'];
const CPU = {
  arm: 'arm',
  'arm-eabi': 'arm',
  'arm-gnueabihf': 'arm',
  'arm-musleabihf': 'arm',
  arm64: 'arm64',
  x64: 'x64',
  ia32: 'ia32',
  loong64: 'loong64',
  ppc64: 'ppc64',
  riscv64: 'riscv64',
  s390x: 's390x',
};

/** Reads os, cpu and libc from a platform package name such as `rollup-linux-arm64-musl`. */
function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const at = parts.findIndex((part) => OS.includes(part));
  if (at < 0) return undefined;
  const rest = parts.slice(at + 1);
  const libc = rest.some((part) => part.startsWith('musl'))
    ? 'musl'
    : rest.some((part) => part === 'gnu' || part.startsWith('gnueabi'))
      ? 'glibc'
      : undefined;
  const cpuKey = [rest.slice(0, 2).join('-'), rest[0]].find((key) => key in CPU);
  if (cpuKey === undefined) return undefined;
  return { os: parts[at], cpu: CPU[cpuKey], libc };
}

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
let added = 0;
for (const [location, record] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(record.optionalDependencies ?? {})) {
    const target = `node_modules/${name}`;
    if (lock.packages[target] !== undefined) continue;
    const platform = platformOf(name);
    if (platform === undefined) throw new Error(`${location}: cannot tell the platform of optional ${name}`);
    lock.packages[target] = {
      version,
      cpu: [platform.cpu],
      ...(record.dev && { dev: true }),
      ...(platform.libc && { libc: [platform.libc] }),
      optional: true,
      os: [platform.os],
    };
    added += 1;
  }
}
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: added ${added} platform record(s)`);
