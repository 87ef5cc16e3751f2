/**
 * A temp file's descriptor is closed once. When the rename of a committed temp file fails, the
 * caller discards it: closing its descriptor a second time would close whatever file was given
 * that number since (the checkpoint's, the rejects file's, a socket), and later writes would fail
 * or land elsewhere. Runs alone: another test thread opening files would take the freed number.
 */
import { closeSync, fstatSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { commitTemp, createTempBeside, discardTemp } from '../../src/cli/files.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('temp files beside an output', () => {
  it('a failed rename closes the descriptor once: a file opened since keeps its own', () => {
    const dir = mkdtempSync(join(tmpdir(), 'push-temp-'));
    dirs.push(dir);
    const target = join(dir, 'out.json');
    const temp = createTempBeside(target, '--out');
    // The target becomes a directory with a file in it: renaming a file over it fails.
    mkdirSync(target);
    writeFileSync(join(target, 'inside'), '');
    expect(() => commitTemp(temp, target)).toThrow();

    // A descriptor opened now takes the lowest free number: the one the commit just closed.
    const other = openSync(join(dir, 'other'), 'w');
    try {
      expect(other).toBe(temp.fd);
      discardTemp(temp);
      expect(() => fstatSync(other)).not.toThrow();
    } finally {
      try {
        closeSync(other);
      } catch {
        // closed by the code under test: the assertion above has said so
      }
    }
  });
});
