// Writes the README's TypeScript Quick start (the ```ts block under "### TypeScript"), verbatim, to
// each path given, so that the consumer projects compile exactly what the README shows.
//
//   node extract-ts-quickstart.mjs <README.md> <out.ts>...
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';

const [readmePath, ...outputs] = process.argv.slice(2);
if (!readmePath || outputs.length === 0) throw new Error('usage: extract-ts-quickstart.mjs <README.md> <out.ts>...');
const lines = readFileSync(readmePath, 'utf8').split('\n');
const start = lines.indexOf('### TypeScript');
assert.ok(start >= 0, 'README.md has no "### TypeScript" section');
const end = lines.findIndex((line, i) => i > start && /^#{1,3} /.test(line));
const section = lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
const blocks = [...section.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map(([, body]) => body);
assert.equal(blocks.length, 1, 'README.md "### TypeScript" has exactly one ```ts block');
for (const output of outputs) writeFileSync(output, blocks[0]);
