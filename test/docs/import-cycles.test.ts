/**
 * The layers ARCHITECTURE.md draws each call only the ones below them: no src file imports, at
 * once, a file that imports it back. (A `.web.ts` twin replaces its file in one build only.)
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { importCycles } from '../support/import-trips.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('the import graph of src/', () => {
  it('has no cycle of static imports', () => {
    const files = execFileSync('git', ['ls-files', 'src/*.ts'], { cwd: ROOT, encoding: 'utf8' })
      .split('\n')
      .filter((file) => file.endsWith('.ts') && !file.endsWith('.web.ts'));
    expect(files.length).toBeGreaterThan(50);
    expect(importCycles(files)).toEqual([]);
  });
});
