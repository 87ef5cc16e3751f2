/** SECURITY.md's threat model names, for each class, the tests that cover it: every one must exist. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const security = readFileSync(join(root, 'SECURITY.md'), 'utf8');

/** `dir/*` or `dir/name.*.ts` style globs: a single `*` within the last path segment. */
function globMatches(pattern: string): string[] {
  const dir = dirname(pattern);
  const [before, after] = pattern.slice(dir.length + 1).split('*') as [string, string];
  if (!existsSync(join(root, dir))) return [];
  return readdirSync(join(root, dir)).filter((name) => name.startsWith(before) && name.endsWith(after));
}

describe('SECURITY.md', () => {
  const named = [
    ...new Set([...security.matchAll(/`((?:test|bench|scripts)\/[^`\s]+)`/g)].map((match) => match[1] ?? '')),
  ];

  it('names tests for its classes', () => {
    expect(named.length).toBeGreaterThan(40);
  });

  it('names only files that exist', () => {
    const missing = named.filter((path) =>
      path.includes('*') ? globMatches(path).length === 0 : !existsSync(join(root, path)),
    );
    expect(missing).toEqual([]);
  });
});
