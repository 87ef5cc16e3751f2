import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEMO_CLIENT_SECRET, type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../support/cli/build.js';
import {
  CSV_HEADER,
  csvRows,
  emulatorEnv,
  jsonlRecord,
  killChildren,
  makeTempDir,
  runCli,
  startCli,
} from '../support/cli/run.js';
import { readDoc } from '../support/doc-files.js';

const CLI_DOC = 'docs/cli.md';

interface Example {
  line: string;
  args: string[];
  stdinFile?: string;
  /** For a ```console example: the output it shows (a usage error, printed on stderr). */
  output?: string;
}

function parse(line: string): Pick<Example, 'line' | 'args' | 'stdinFile'> {
  const [command, stdinFile] = line.slice('$ push-api '.length).split(' < ');
  const args = (command?.match(/"[^"]*"|\S+/g) ?? []).map((arg) => arg.replace(/^"|"$/g, ''));
  return { line, args, stdinFile: stdinFile?.trim() };
}

/**
 * Every `$ push-api …` line of docs/cli.md, with an optional `< file` stdin redirect. Lines in
 * ```console blocks carry the output shown under them, up to the next `$` line or the block's end.
 */
function examples(): Example[] {
  const found: Example[] = [];
  let language: string | undefined;
  let last: Example | undefined;
  let ownTest = false;
  for (const text of readDoc(CLI_DOC).split('\n')) {
    // "Real exports" runs its recipes, with the files it shows, in real-exports-docs.e2e.test.ts.
    if (text.startsWith('## ')) ownTest = text === '## Real exports';
    if (ownTest) continue;
    const fence = /^```\s*([\w-]*)/.exec(text);
    if (fence) {
      language = language === undefined ? (fence[1] ?? '') : undefined;
      last = undefined;
      continue;
    }
    if (text.startsWith('$ push-api ')) {
      last = { ...parse(text), ...(language === 'console' ? { output: '' } : {}) };
      found.push(last);
    } else if (language === 'console' && last?.output !== undefined) {
      last.output = last.output === '' ? text : `${last.output}\n${text}`;
    }
  }
  return found;
}

/** The `npx push-api …` lines of the README's "## Command line" section, without their `# comments`. */
function readmeExamples(): Example[] {
  const text = readDoc('README.md');
  const start = text.indexOf('\n## Command line\n');
  if (start === -1) throw new Error('README.md has no "## Command line" section');
  const end = text.indexOf('\n## ', start + 1);
  return text
    .slice(start, end === -1 ? undefined : end)
    .split('\n')
    .filter((line) => line.startsWith('npx push-api '))
    .map((line) => parse(`$ ${line.slice('npx '.length).replace(/\s+#.*$/, '')}`));
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

describe('docs/cli.md examples', () => {
  it('has examples of every command', () => {
    const commands = new Set(
      examples().map((example) => example.args.slice(0, example.args[0] === 'finance' ? 2 : 1).join(' ')),
    );
    expect([...commands].sort()).toEqual(['demo', 'emulator', 'finance publish', 'token', 'upload']);
  });

  it('shows the output of the usage errors it quotes', () => {
    expect(examples().filter((example) => example.output !== undefined).length).toBeGreaterThanOrEqual(2);
  });

  it('starts the emulator as shown (on a free port here, not 4010)', async () => {
    const example = examples().find((candidate) => candidate.args[0] === 'emulator');
    const { child, done } = startCli(cli, [...(example?.args ?? []), '--port', '0'], { timeoutMs: 60_000 });
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const deadline = Date.now() + 30_000;
    while (!out.includes('listening') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(out).toMatch(/push-api emulator listening on http:\/\/127\.0\.0\.1:\d+/);
    child.kill('SIGTERM');
    await done;
  });

  it('README.md "Command line": one line per command, each run below', () => {
    expect(readmeExamples().map((example) => example.args[0])).toEqual([
      'token',
      'finance',
      'finance',
      'upload',
      'demo',
    ]);
  });

  // A README line that docs/cli.md shows too runs once.
  const documented = new Set(examples().map((example) => example.line));
  const toRun = [...examples(), ...readmeExamples().filter((example) => !documented.has(example.line))];
  for (const example of toRun.filter((candidate) => candidate.args[0] !== 'emulator')) {
    it(`runs: ${example.line}`, async () => {
      const stdin = example.stdinFile ? readFileSync(temp.path(example.stdinFile), 'utf8') : undefined;
      const recordsBefore = emulator.mock.state.recordCount(emulator.mock.appId);
      const result = await runCli(cli, example.args, { env: emulatorEnv(emulator), cwd: temp.dir, stdin });
      if (example.output !== undefined) {
        // A quoted usage error: exactly the lines shown, on stderr, nothing sent, exit code 2.
        expect(result.stderr.trim()).toBe(example.output.trim());
        expect(result.code).toBe(2);
        expect(emulator.mock.state.recordCount(emulator.mock.appId)).toBe(recordsBefore);
        return;
      }
      expect(result.stderr).not.toMatch(/push-api: /);
      expect(result.code).toBe(0);
    });
  }
});
