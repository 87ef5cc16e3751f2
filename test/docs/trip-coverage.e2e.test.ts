/**
 * ARCHITECTURE.md's runtime count of the two trips (the files whose functions run) matches what
 * `scripts/trip-coverage.ts` measures, and names every file that runs outside the import closure.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { filesCrossed, TRIPS } from '../support/import-trips.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const architecture = readFileSync(path.join(ROOT, 'ARCHITECTURE.md'), 'utf8');

/** The table that gives the runtime counts ("files that run"), and the section around it. */
function runtimeCounts(): { record: number; file: number; text: string } {
  const section = /## Two trips, file by file[\s\S]*?(?=\n## )/.exec(architecture)?.[0];
  const record = section && /\| a record, [^|]*\| \*\*(\d+)\*\*/.exec(section);
  const file = section && /\| a file, [^|]*\| \*\*(\d+)\*\*/.exec(section);
  if (!section || !record || !file) throw new Error('ARCHITECTURE.md has no runtime count of the trips');
  return { record: Number(record[1]), file: Number(file[1]), text: section.replace(/\s+/g, ' ') };
}

describe('the runtime count of the two trips in ARCHITECTURE.md', () => {
  it('gives the counts scripts/trip-coverage.ts measures, and the files run outside the closure', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'scripts/trip-coverage.ts', '--json'],
      { cwd: ROOT, timeout: 30_000 },
    );
    const run = JSON.parse(stdout) as Record<keyof typeof TRIPS, Record<string, string[]>>;
    const told = runtimeCounts();
    for (const name of Object.keys(TRIPS) as (keyof typeof TRIPS)[]) {
      // "" holds code compiled from a string, which is in no file.
      const ran = Object.keys(run[name]).filter((file) => file !== '');
      expect(ran.length, `${name} trip`).toBe(told[name]);
      const closure = filesCrossed(TRIPS[name]);
      for (const file of ran.filter((file) => !closure.includes(file))) expect(told.text).toContain(file);
    }
  });
});
