/** ARCHITECTURE.md tells the two trips (a record, a file) file by file: its lists and counts match the code. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { filesCrossed, TRIPS } from '../support/import-trips.js';

const architecture = readFileSync(new URL('../../ARCHITECTURE.md', import.meta.url), 'utf8');

/** The count in bold and the files listed (first word of each line) after `<!-- trip:name -->`. */
function tripInDoc(name: string): { count: number; files: string[] } {
  const match = new RegExp(
    `<!-- trip:${name} -->\\n[^\\n]*\\*\\*(\\d+) files\\*\\*:\\n\`\`\`\\n([\\s\\S]*?)\`\`\``,
  ).exec(architecture);
  if (!match) throw new Error(`ARCHITECTURE.md has no trip "${name}"`);
  const files = (match[2] ?? '')
    .split('\n')
    .map((line) => line.split(/\s+/)[0] ?? '')
    .filter(Boolean);
  return { count: Number(match[1]), files };
}

describe('the two trips in ARCHITECTURE.md', () => {
  for (const name of Object.keys(TRIPS) as (keyof typeof TRIPS)[]) {
    it(`lists every file the ${name} trip crosses, once, and counts them`, () => {
      const crossed = filesCrossed(TRIPS[name]);
      const told = tripInDoc(name);
      expect([...told.files].sort()).toEqual(crossed);
      expect(new Set(told.files).size).toBe(told.files.length);
      expect(told.count).toBe(crossed.length);
    });
  }
});
