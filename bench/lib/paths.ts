/** Where the harness finds the repository, its build output and its compiled children. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BENCH_DIR = path.join(REPO_ROOT, 'bench');
/** Children compiled to plain JS (ignored by git, see bench/.gitignore). */
export const BUILD_DIR = path.join(BENCH_DIR, '.build');
export const CLI_ENTRY = path.join(REPO_ROOT, 'dist/cli/main.js');

/** The compiled file of a child entry in `bench/children/`. */
export function childScript(name: string): string {
  return path.join(BUILD_DIR, `${name}.mjs`);
}
