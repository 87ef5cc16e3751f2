import { execFileSync } from 'node:child_process';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { buildCli } from './build.js';
import { killChildren, makeTempDir, type RunOptions, type RunResult, startCli } from './run.js';

export interface CliFixture {
  /** The built CLI's entry point, set in beforeAll. */
  cli: string;
  /** A fresh emulator on a free port, set in beforeEach. */
  emulator: RunningEmulator;
  /** A fresh temporary directory, set in beforeEach. */
  temp: ReturnType<typeof makeTempDir>;
}

/**
 * For an end-to-end CLI test file: builds the CLI once, starts a fresh emulator and temporary
 * directory before each test, and after each test kills every child, closes the emulator and
 * removes the directory. Read the fields inside hooks and tests, not at module level.
 */
export function useCliFixture(): CliFixture {
  const fixture = {} as CliFixture;
  beforeAll(async () => {
    fixture.cli = await buildCli();
  }, 60_000);
  beforeEach(async () => {
    fixture.emulator = await startEmulator({ port: 0 });
    fixture.temp = makeTempDir();
  });
  afterEach(async () => {
    killChildren();
    await fixture.emulator.close();
    fixture.temp.remove();
  });
  return fixture;
}

/**
 * For an end-to-end CLI test file that brings its own service (a far emulator, say): builds the
 * CLI once and makes one temporary directory for the file; after the file, kills every child and
 * removes the directory. Read `cli` inside hooks and tests, not at module level.
 */
export function useBuiltCli(): Pick<CliFixture, 'cli' | 'temp'> {
  const fixture: Pick<CliFixture, 'cli' | 'temp'> = { cli: '', temp: makeTempDir() };
  beforeAll(async () => {
    fixture.cli = await buildCli();
  }, 60_000);
  afterAll(() => {
    killChildren();
    fixture.temp.remove();
  });
  return fixture;
}

/** A CLI run refused with exit 2 (its message matching), before anything was sent, not even a token request. */
export function expectRefusedBeforeSending(result: RunResult, message: RegExp, emulator: RunningEmulator): void {
  expect(result.signal).toBeNull();
  expect(result.stderr).toMatch(message);
  expect(result.code).toBe(2);
  expect(emulator.mock.state.tokenRequestCount).toBe(0);
  expect(emulator.mock.state.requests).toHaveLength(0);
}

/**
 * A command whose `--client-secret-file` names a FIFO nobody writes to (`argsFor` gives its
 * arguments): it waits for a writer, and SIGTERM still ends it by itself, with exit 130, promptly,
 * without printing the path.
 */
export async function expectSigtermEndsFifoWait(
  fixture: Pick<CliFixture, 'cli' | 'temp'>,
  argsFor: (fifo: string) => string[],
  options: RunOptions = {},
): Promise<void> {
  const fifo = fixture.temp.path('planted-fifo');
  execFileSync('mkfifo', [fifo]);
  const { child, done } = startCli(fixture.cli, argsFor(fifo), { timeoutMs: 20_000, ...options });
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const sentAt = performance.now();
  child.kill('SIGTERM');
  const result = await done;
  expect(result.signal).toBeNull(); // it exited by itself, not by the test's SIGKILL bound
  expect(result.code).toBe(130);
  expect(performance.now() - sentAt).toBeLessThan(10_000);
  expect(result.stderr).not.toContain(fifo);
}
