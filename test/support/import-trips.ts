/**
 * The files a call crosses, counted from the code: the closure of the runtime imports (static and
 * `import()`) of a trip's first files. `import type` and imports of types only are not crossings.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * A trip enters at client.ts, whose `finance` and `uploads` are parts it built with the transport
 * and the token manager: client.ts counts as one file crossed, and the trip goes on in those parts
 * (client.ts's own imports, the other operation among them, are not on the trip).
 */
export const TRIPS = {
  // client.ts also hands the publisher the window a client's last publish left (run/engine.ts).
  record: ['src/finance/publisher.ts', 'src/http/http-client.ts', 'src/auth/token-manager.ts', 'src/run/engine.ts'],
  file: ['src/uploads/uploader.ts', 'src/http/http-client.ts', 'src/auth/token-manager.ts'],
} as const;

const IMPORT = /^\s*(import|export)\s+(type\s+)?(?:([^'";]*?)\s+from\s+)?['"](\.[^'"]+)['"]/gm;
const DYNAMIC = /import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

/** The relative modules `file` loads when it runs (with `lazy: false`, only those it loads at once). */
function runtimeImports(file: string, { lazy = true } = {}): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const [, keyword, typeOnly, clause = '', specifier] of text.matchAll(IMPORT)) {
    if (typeOnly || specifier === undefined) continue;
    if (keyword === 'export' && clause === '') continue;
    const named = /^\{([^}]*)\}$/.exec(clause.trim());
    const names =
      named?.[1]
        ?.split(',')
        .map((name) => name.trim())
        .filter(Boolean) ?? [];
    if (named && names.length > 0 && names.every((name) => name.startsWith('type '))) continue;
    found.push(specifier);
  }
  if (lazy) for (const [, specifier] of text.matchAll(DYNAMIC)) if (specifier) found.push(specifier);
  return found.map((specifier) => path.resolve(path.dirname(file), specifier.replace(/\.js$/, '.ts')));
}

/** client.ts, then every src/ file the trip's parts load (relative to src/), sorted. */
export function filesCrossed(parts: readonly string[]): string[] {
  const seen = new Set<string>([path.join(ROOT, 'src/client.ts')]);
  const visit = (file: string): void => {
    if (seen.has(file) || !existsSync(file)) return;
    seen.add(file);
    for (const next of runtimeImports(file)) visit(next);
  };
  for (const part of parts) visit(path.join(ROOT, part));
  return [...seen].map((file) => path.relative(path.join(ROOT, 'src'), file)).sort();
}

/**
 * The cycles among the static runtime imports of `files` (paths relative to the repository), each
 * as the files on it, the first repeated at the end. A layer that imports one above it closes one.
 */
export function importCycles(files: readonly string[]): string[][] {
  const cycles: string[][] = [];
  const done = new Set<string>();
  const path_: string[] = [];
  const visit = (file: string): void => {
    const at = path_.indexOf(file);
    if (at >= 0) {
      cycles.push([...path_.slice(at), file].map((each) => path.relative(ROOT, each)));
      return;
    }
    if (done.has(file) || !existsSync(file)) return;
    path_.push(file);
    for (const next of runtimeImports(file, { lazy: false })) visit(next);
    path_.pop();
    done.add(file);
  };
  for (const file of files) visit(path.join(ROOT, file));
  return cycles;
}
