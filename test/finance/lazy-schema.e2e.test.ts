/** zod is never loaded for valid records: a fresh process in which zod cannot be loaded at all. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

describe('zod, loaded on first need, in a process of its own', () => {
  it('is never loaded to publish valid records, from an array, a generator or an async iterable', async () => {
    // A fresh process in which zod cannot be loaded at all: valid records must go through anyway.
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', '--import', './test/support/without-zod.mjs', 'test/finance/fixtures/publish-without-zod.ts'],
      { cwd: root, timeout: 60_000 },
    );
    const result = JSON.parse(stdout) as { sent: Record<string, number>; invalid: string; compiled: boolean };
    expect(result.compiled).toBe(true);
    expect(result.sent).toEqual({ array: 1500, arraySkip: 1500, generator: 1500, asyncIterable: 1500, batch: 10 });
    // The control: the first record only zod can judge asks for zod, which the process refuses.
    expect(result.invalid).toContain('zod is blocked in this process');
  }, 60_000);
});
