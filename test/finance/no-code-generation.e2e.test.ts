/**
 * Where a runtime forbids compiling code from strings (a Cloudflare Worker, a page with a strict
 * Content-Security-Policy, `node --disallow-code-generation-from-strings`), the fast check runs
 * the table's rules directly instead of compiling them: valid records still go through without
 * zod. A child process with code generation off and zod blocked publishes to an emulator.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

describe('the fast check without code generation from strings', () => {
  it('publishes valid records from every kind of input without compiling code and without zod', async () => {
    const { stdout } = await run(
      process.execPath,
      [
        '--disallow-code-generation-from-strings',
        '--import',
        'tsx',
        '--import',
        './test/support/without-zod.mjs',
        'test/finance/fixtures/publish-without-zod.ts',
      ],
      { cwd: root, timeout: 60_000 },
    );
    const result = JSON.parse(stdout) as { sent: Record<string, number>; invalid: string; compiled: boolean };
    expect(result.compiled).toBe(false);
    expect(result.sent).toEqual({ array: 1500, arraySkip: 1500, generator: 1500, asyncIterable: 1500, batch: 10 });
    expect(result.invalid).toContain('zod is blocked in this process');
  }, 60_000);
});
