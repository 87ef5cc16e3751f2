/**
 * docs/cli.md against the `push-api` commands as commander (and so `--help`) knows them: every flag
 * of every command is on the page and the page names no other, the emulator's flags table of
 * docs/testing.md has one row per flag, the bounds and defaults the page gives are the parsers',
 * and its exit codes are ExitCode's.
 */
import { describe, expect, it } from 'vitest';
import { demoCommand } from '../../src/cli/commands/demo.js';
import { emulatorCommand } from '../../src/cli/commands/emulator.js';
import { tokenCommand } from '../../src/cli/commands/token.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { financeCommand } from '../../src/cli/publish/command.js';
import { uploadCommand } from '../../src/cli/upload/command.js';
import { FINANCE_DEFAULTS } from '../../src/defaults.js';
import { readDoc } from '../support/doc-files.js';

/** The long flags of each `push-api` command, as commander (and so `--help`) knows them. */
function cliFlags(): Map<string, string[]> {
  const flags = new Map<string, string[]>();
  const finance = financeCommand();
  const commands = [
    ...finance.commands.map((command) => ({ name: `finance ${command.name()}`, command })),
    ...[uploadCommand(), tokenCommand(), emulatorCommand(), demoCommand()].map((command) => ({
      name: command.name(),
      command,
    })),
  ];
  for (const { name, command } of commands) {
    flags.set(
      name,
      command.options.flatMap((option) => (option.long === undefined ? [] : [option.long])),
    );
  }
  return flags;
}

/** Every `--flag` written in a page, code blocks included. */
function flagsIn(text: string): Set<string> {
  return new Set(text.match(/(?<![\w-])--[a-z][a-z0-9-]*/g) ?? []);
}

/** Flags docs/cli.md writes that are no flag of push-api, each for a reason. */
const NOT_PUSH_API_FLAGS = new Set([
  '--client-secret', // the page's example of an unknown option, whose value is not echoed
  '--bogus', // the page's example of an unknown option
  '--opt', // `--opt=value`, the page's words for any option
  '--help', // commander's own, on every command
  '--version',
]);

describe('docs/cli.md and push-api --help', () => {
  const cliDoc = readDoc('docs/cli.md');
  const documented = flagsIn(cliDoc);

  it('documents every flag of every command', () => {
    const missing = [...cliFlags()].flatMap(([command, flags]) =>
      flags.filter((flag) => !documented.has(flag)).map((flag) => `${command} ${flag}`),
    );
    expect(missing).toEqual([]);
  });

  it('names no flag that no command has', () => {
    const known = new Set([...cliFlags().values()].flat());
    expect([...documented].filter((flag) => !known.has(flag) && !NOT_PUSH_API_FLAGS.has(flag))).toEqual([]);
  });

  it("docs/testing.md's emulator flags table has one row per flag of push-api emulator", () => {
    const rows = readDoc('docs/testing.md')
      .split('\n')
      .flatMap((line) => /^\| `(--[a-z-]+)[ `]/.exec(line)?.[1] ?? []);
    expect(rows.sort()).toEqual([...(cliFlags().get('emulator') ?? [])].sort());
  });

  it.each([
    ['finance publish', '--concurrency', '64', '65', '1 to 64, default 64'],
    ['finance publish', '--concurrency', '1', '0', '1 to 64, default 64'],
    ['upload', '--concurrency', '64', '65', '(1 to 64, default 64)'],
    ['finance publish', '--max-batch-bytes', '1024', '1023', 'at\n  least 1024'],
    ['finance publish', '--skip-lines', '10000', '10001', 'at most 10,000'],
  ])('%s %s takes %s, refuses %s, as the page says (%s)', (command, flag, taken, refused, text) => {
    const commands = [...financeCommand().commands, uploadCommand()];
    const option = commands
      .find((candidate) => (candidate.name() === 'upload' ? 'upload' : `finance ${candidate.name()}`) === command)
      ?.options.find((candidate) => candidate.long === flag);
    const parse = option?.parseArg;
    expect(parse).toBeTypeOf('function');
    expect(() => parse?.(taken, undefined)).not.toThrow();
    expect(() => parse?.(refused, undefined)).toThrow();
    expect(cliDoc).toContain(text);
  });

  it('the flags --help shows with a default show the default docs/cli.md gives', () => {
    const publish = financeCommand().commands.find((command) => command.name() === 'publish');
    const batchSize = publish?.options.find((option) => option.long === '--batch-size');
    expect(batchSize?.defaultValue).toBe(FINANCE_DEFAULTS.batchSize);
    expect(cliDoc).toContain(`\`--batch-size\` (at most ${FINANCE_DEFAULTS.maxBatchSize}, the default)`);
    expect(cliDoc).toContain(`default ${FINANCE_DEFAULTS.concurrency}: the window adapts`);
    const port = emulatorCommand().options.find((option) => option.long === '--port');
    expect(cliDoc).toContain(`\`--port\` (default ${String(port?.defaultValue)})`);
  });
});

describe("docs/cli.md's exit codes", () => {
  it('has one row per exit code of push-api', () => {
    const page = readDoc('docs/cli.md');
    const table = page.slice(page.indexOf('\n## Exit codes\n'));
    const codes = table.split('\n').flatMap((line) => /^\| (\d+) \|/.exec(line)?.[1] ?? []);
    expect(codes.map(Number).sort((a, b) => a - b)).toEqual(Object.values(ExitCode).sort((a, b) => a - b));
  });
});
