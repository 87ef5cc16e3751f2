import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DEMO_CLIENT_SECRET, type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from './helpers/build.js';
import {
  CSV_HEADER,
  csvRows,
  emulatorEnv,
  jsonlRecord,
  killChildren,
  makeTempDir,
  runCli,
  startCli,
} from './helpers/run.js';

const README = resolve(import.meta.dirname, '../../README.md');

/** The README's "## Command line" section, up to the next second-level heading. */
function commandLineSection(): string {
  const text = readFileSync(README, 'utf8');
  const start = text.indexOf('\n## Command line\n');
  if (start === -1) throw new Error('README.md has no "## Command line" section');
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end === -1 ? undefined : end);
}

/** Every `$ push-api …` line of the README's "Command line" section, with an optional `< file` stdin redirect. */
function examples(): { line: string; args: string[]; stdinFile?: string }[] {
  return commandLineSection()
    .split('\n')
    .filter((line) => line.startsWith('$ push-api '))
    .map((line) => {
      const [command, stdinFile] = line.slice('$ push-api '.length).split(' < ');
      const args = (command?.match(/"[^"]*"|\S+/g) ?? []).map((arg) => arg.replace(/^"|"$/g, ''));
      return { line, args, stdinFile: stdinFile?.trim() };
    });
}

let cli: string;
let emulator: RunningEmulator;
const temp = makeTempDir();

beforeAll(async () => {
  cli = await buildCli();
  emulator = await startEmulator({ port: 0 });
  const jsonl = Array.from({ length: 5 }, (_, i) => jsonlRecord(i)).join('\n');
  writeFileSync(temp.path('expenses.csv'), `${CSV_HEADER}\n${csvRows(50)}\n`);
  writeFileSync(
    temp.path('supplier-export.csv'),
    'Date,Total,currency,identifier,type,Supplier\n2024-01-31,9.99,USD,a@example.com,expense,Acme\n',
  );
  writeFileSync(temp.path('expenses.jsonl'), `${jsonl}\n`);
  writeFileSync(temp.path('expenses.json'), JSON.stringify([JSON.parse(jsonlRecord(1))]));
  writeFileSync(temp.path('users.csv'), 'email\na@example.com\n');
  mkdirSync(temp.path('exports'));
  writeFileSync(join(temp.dir, 'exports', 'a.csv'), 'x\n1\n');
  writeFileSync(join(temp.dir, 'exports', 'b.csv'), 'x\n2\n');
  writeFileSync(temp.path('secret.txt'), `${DEMO_CLIENT_SECRET}\n`);
}, 60_000);
afterAll(async () => {
  killChildren();
  await emulator?.close();
  temp.remove();
});

describe('README.md "Command line" examples', () => {
  it('has examples of every command', () => {
    const commands = new Set(
      examples().map((example) => example.args.slice(0, example.args[0] === 'finance' ? 2 : 1).join(' ')),
    );
    expect([...commands].sort()).toEqual(['demo', 'emulator', 'finance publish', 'token', 'upload']);
  });

  it('starts the emulator as shown (on a free port here, not 4010)', async () => {
    const example = examples().find((candidate) => candidate.args[0] === 'emulator');
    const { child, done } = startCli(cli, [...(example?.args ?? []), '--port', '0']);
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const deadline = Date.now() + 10_000;
    while (!out.includes('listening') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(out).toMatch(/push-api emulator listening on http:\/\/127\.0\.0\.1:\d+/);
    child.kill('SIGTERM');
    await done;
  });

  for (const example of examples().filter((candidate) => candidate.args[0] !== 'emulator')) {
    it(`runs: ${example.line}`, async () => {
      const stdin = example.stdinFile ? readFileSync(temp.path(example.stdinFile), 'utf8') : undefined;
      const result = await runCli(cli, example.args, { env: emulatorEnv(emulator), cwd: temp.dir, stdin });
      expect(result.stderr).not.toMatch(/push-api: /);
      expect(result.code).toBe(0);
    });
  }
});
