/**
 * Where the user documentation lives, for the tests that check it: the short README, and the
 * reference pages under docs/ (the generated API reference in docs/api is not one of them).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The Markdown pages users read, relative to the repository root: README.md, then docs/*.md. */
export function docFiles(): string[] {
  const pages = readdirSync(join(REPO_ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...pages];
}

/** The text of a page, by its path relative to the repository root. */
export function readDoc(file: string): string {
  return readFileSync(join(REPO_ROOT, file), 'utf8');
}

/** The pages whose relative links must resolve, in the repository and in the tarball: the user docs and SECURITY.md. */
export function linkedPages(): string[] {
  return [...docFiles(), 'SECURITY.md'];
}
