/**
 * An input path swapped after it was checked: another local user who can write the input's
 * directory (or re-point a link the CLI was given) puts a FIFO there. Opening a FIFO for reading
 * blocks until a writer comes, in one of libuv's few threads; the run would hang before sending
 * anything, and a signal could not end it in order. Each place that opens an input must refuse it
 * at once, as the file that was not checked.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fingerprintInputs } from '../../src/cli/checkpoint.js';
import { UsageError } from '../../src/cli/exit-codes.js';
import { rowRules } from '../../src/cli/normalize/rules.js';
import { InputChangedError } from '../../src/cli/readers/file-identity.js';
import { checkCsvHeaders, type InputSpec, readInput, resolveInputs } from '../../src/cli/readers/index.js';

const CSV = 'created,amount,currency,identifier,type,vendor\n2025-01-31,1,EUR,a,expense,V\n';

let dir: string;
let fifo: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'push-api-input-swapped-'));
  fifo = join(dir, 'in.csv');
});
afterEach(() => {
  // A reader left blocked in open() by a failing run is released by a writer that comes and goes,
  // so that the test process is not held by a stuck thread.
  try {
    closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
  } catch {
    // No reader waits (ENXIO), or the path is no FIFO: nothing to release.
  }
  rmSync(dir, { recursive: true, force: true });
});

/** Checks a regular file as the CLI does, then puts a FIFO in its place. */
async function checkedThenSwapped(): Promise<InputSpec> {
  writeFileSync(fifo, CSV);
  const [spec] = await resolveInputs([fifo], undefined);
  unlinkSync(fifo);
  execFileSync('mkfifo', [fifo]);
  return spec as InputSpec;
}

/** Settles `promise`, or reports that it still waits after `ms`. */
function within<T>(promise: Promise<T>, ms: number): Promise<{ value?: T; error?: unknown; hung?: true }> {
  return Promise.race([
    promise.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    ),
    new Promise<{ hung: true }>((resolve) => setTimeout(() => resolve({ hung: true }), ms).unref()),
  ]);
}

describe('an input path swapped for a FIFO after it was checked', () => {
  it('is refused by the header check at once, naming the file', async () => {
    const spec = await checkedThenSwapped();
    const outcome = await within(checkCsvHeaders([spec], rowRules({}), undefined), 2000);
    expect(outcome.hung).toBeUndefined();
    expect(outcome.error).toBeInstanceOf(UsageError);
    expect((outcome.error as Error).message).toBe(
      `${fifo} changed while it was read (it is no longer a regular file); nothing read after the change was used`,
    );
  });

  it('is refused by the reader at once, with no row read', async () => {
    const spec = await checkedThenSwapped();
    const rows = readInput(spec, { rules: rowRules({}) });
    const outcome = await within(rows.next(), 2000);
    expect(outcome.hung).toBeUndefined();
    expect(outcome.error).toBeInstanceOf(InputChangedError);
    expect((outcome.error as Error).message).toContain(
      `${fifo} changed while it was read (it is no longer a regular file)`,
    );
  });

  it('is refused by the checkpoint fingerprint at once', async () => {
    const spec = await checkedThenSwapped();
    const outcome = await within(fingerprintInputs([spec], {}), 2000);
    expect(outcome.hung).toBeUndefined();
    expect(outcome.error).toBeInstanceOf(UsageError);
    expect((outcome.error as Error).message).toMatch(
      /changed while it was read \(it is no longer a regular file\); nothing was sent/,
    );
  });
});
