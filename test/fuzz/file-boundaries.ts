/**
 * The boundary fuzz suite's file properties: input rows nested deep in JSON and JSONL files, and
 * checkpoint files of any content. Each ends in rows or the reader's InputError, or in a
 * checkpoint or a UsageError, in bounded time; never a RangeError or a TypeError, and every row
 * can be written to a rejects file (JSON.stringify).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { expect } from 'vitest';
import { Checkpoint } from '../../src/cli/checkpoint.js';
import { UsageError } from '../../src/cli/exit-codes.js';
import { MAX_ROW_DEPTH } from '../../src/cli/readers/depth.js';
import type { InputSpec } from '../../src/cli/readers/index.js';
import { readJson, readJsonl } from '../support/readers.js';
import { FUZZ_SEED } from './arbitraries.js';
import { chunked, cuts, drain } from './reader-input.js';

/** A hang detector, not a speed claim (see boundaries.ts). */
const CASE_DEADLINE_MS = 5_000;

const VALID = '"created":1700000000000,"amount":1,"currency":"EUR","identifier":"a","type":"expense","vendor":"v"';

/** A value nested `depth` deep in arrays or objects. */
const nestedValue = fc
  .tuple(
    fc.integer({ min: 1, max: 40_000 }),
    fc.constantFrom('[', '{"k":'),
    fc.constantFrom('1', '"x"', 'null', '[]', '{}'),
  )
  .map(([depth, open, inner]) => `${open.repeat(depth)}${inner}${(open === '[' ? ']' : '}').repeat(depth)}`);

/** One row: a valid record, a record with a nested field (known or unknown), or a nested value alone. */
const row = fc.oneof(
  fc.constant(`{${VALID}}`),
  fc
    .tuple(fc.constantFrom('vendor', 'amount', 'extra', 'description', '__proto__'), nestedValue)
    .map(([field, value]) => `{${VALID.replace(/"vendor":"v"/, '"vendor":"w"')},"${field}":${value}}`),
  nestedValue,
);

/** Deep rows in JSONL and JSON files: rows or an InputError; a row deeper than the limit is a reject naming its field. */
export async function fuzzDeepRows(numRuns: number): Promise<void> {
  await fc.assert(
    fc.asyncProperty(fc.array(row, { minLength: 1, maxLength: 5 }), cuts, fc.boolean(), async (rows, sizes, asJson) => {
      const text = asJson ? `[${rows.join(',\n')}]` : rows.join('\n');
      const file = asJson ? 'in.json' : 'in.jsonl';
      const source = chunked(Buffer.from(text), sizes);
      const started = performance.now();
      const { rows: read } = await drain(asJson ? readJson(source, file) : readJsonl(source, file));
      expect(performance.now() - started).toBeLessThan(CASE_DEADLINE_MS);
      for (const each of read) {
        // What the rejects file and the checkpoint do with a row: it must serialize.
        JSON.stringify(each);
        if (each.kind === 'reject') {
          for (const issue of each.issues) expect(issue.message.length).toBeLessThan(2_000);
          const deep = each.issues.find((issue) => issue.message.startsWith('nested deeper than'));
          if (deep !== undefined) expect(deep.field).not.toBe('');
        }
      }
      expect(read.length).toBeLessThanOrEqual(rows.length);
    }),
    { numRuns, seed: FUZZ_SEED },
  );
  expect(MAX_ROW_DEPTH).toBeGreaterThan(1);
}

const FINGERPRINT = `sha256:${'0'.repeat(64)}`;
const TARGET = { appId: 'app-1', baseUrl: 'https://api.push.test/' };

/** The JSON text of a value of any type for one field of a checkpoint file. */
const oddValue = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
  fc.constantFrom(
    `[[0,${Number.MAX_SAFE_INTEGER}]]`,
    '[[5,1]]',
    '[[-1,2]]',
    JSON.stringify(Array.from({ length: 5_000 }, (_, i) => [i * 2, i * 2])),
    '1e308',
    '-1',
    JSON.stringify('x'.repeat(100_000)),
  ),
  // Nested deep: written by hand, JSON.stringify would overflow on it too.
  fc.integer({ min: 1, max: 30_000 }).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`),
);

/** A checkpoint file's text: a valid one with fields replaced by odd values, or bytes that are not one. */
const checkpointText = fc.oneof(
  fc
    .dictionary(
      fc.constantFrom(
        'version',
        'fingerprint',
        'target',
        'inputs',
        'handedOffThrough',
        'delivered',
        'failed',
        'unknown',
        'complete',
      ),
      oddValue,
      { maxKeys: 4 },
    )
    .map((odd) => {
      const fields: Record<string, string> = {
        version: '1',
        fingerprint: JSON.stringify(FINGERPRINT),
        target: JSON.stringify(TARGET),
        inputs: '[{"name":"in.csv","size":10}]',
        handedOffThrough: '3',
        delivered: '[[0,1]]',
        failed: '[]',
        unknown: '[[2,2]]',
        complete: 'false',
        updatedAt: '"2026-01-01T00:00:00.000Z"',
        ...odd,
      };
      return `{${Object.entries(fields)
        .map(([key, text]) => `${JSON.stringify(key)}:${text}`)
        .join(',')}}`;
    }),
  fc.string({ unit: 'binary', maxLength: 200 }),
);

/** Checkpoint files of any content: a checkpoint or a UsageError, in bounded time. */
export function fuzzCheckpointFiles(numRuns: number, dir: string): void {
  const input: InputSpec = { path: join(dir, 'in.csv'), name: 'in.csv', format: 'csv', size: 10 };
  let run = 0;
  fc.assert(
    fc.property(checkpointText, fc.boolean(), (text, resendUnknown) => {
      const path = join(dir, `checkpoint-${run++}.json`);
      writeFileSync(path, text, { mode: 0o600 });
      const started = performance.now();
      try {
        const checkpoint = Checkpoint.open(path, FINGERPRINT, [input], resendUnknown, TARGET);
        checkpoint.decide(0);
        checkpoint.carried();
      } catch (error) {
        if (!(error instanceof UsageError)) throw error;
        expect(error.message.length).toBeLessThan(2_000);
      }
      expect(performance.now() - started).toBeLessThan(CASE_DEADLINE_MS);
    }),
    { numRuns, seed: FUZZ_SEED },
  );
}
