import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import type { UploadProgress } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { formatTable, Output } from '../../src/cli/output.js';
import { createProgress } from '../../src/cli/progress.js';
import { terminalLine, terminalText } from '../../src/cli/terminal-text.js';
import { createUploadProgress } from '../../src/cli/upload/progress.js';
import { RAW_TERMINAL_CONTROL } from '../support/cli/control-chars.js';

/** Every character a terminal may act on or that may disguise text, one of each kind. */
const HOSTILE =
  'a\u001b[2J\u001b]8;;https://evil.test\u0007click\u001b]8;;\u0007\u001b]0;title\u0007\r\nb\t\u0000\u007f\u0085\u009b31m' +
  '\u202e\u2066\u200b\u2028\u2029\ufeff\u00ad\u{e0041}';

const RAW_CONTROL = RAW_TERMINAL_CONTROL;

describe('terminalLine', () => {
  it('shows every control and format character escaped, newlines included', () => {
    const line = terminalLine(HOSTILE);
    expect(line).not.toMatch(RAW_CONTROL);
    expect(line).not.toContain('\n');
    expect(line).toBe(
      'a\\x1b[2J\\x1b]8;;https://evil.test\\x07click\\x1b]8;;\\x07\\x1b]0;title\\x07\\r\\nb\\t\\x00\\x7f\\x85\\x9b31m' +
        '\\u202e\\u2066\\u200b\\u2028\\u2029\\ufeff\\xad\\u{e0041}',
    );
  });

  it('leaves printable text alone: accents, emoji, CJK, backslashes', () => {
    const text = 'Zoë 😀 東京 C:\\data\\in.csv "quoted" {braces}';
    expect(terminalLine(text)).toBe(text);
  });
});

describe('terminalText', () => {
  it('keeps newlines and escapes everything else', () => {
    const text = terminalText(HOSTILE);
    expect(text).not.toMatch(RAW_CONTROL);
    expect(text.split('\n')).toHaveLength(2);
    expect(text).toContain('\\r\nb\\t');
  });
});

function capture(): PassThrough & { isTTY?: boolean; text: () => string } {
  const stream = new PassThrough() as PassThrough & { isTTY?: boolean; text: () => string };
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.text = () => Buffer.concat(chunks).toString();
  return stream;
}

describe('Output', () => {
  it('escapes errors, log lines, results and table cells, and keeps the JSON report exact', () => {
    const stdout = capture();
    const stderr = capture();
    const output = new Output({ json: false, verbose: false, stdout, stderr });
    output.error(`service said: ${HOSTILE}`);
    output.log(`line: ${HOSTILE}`);
    output.result(`title\n${formatTable([[HOSTILE, HOSTILE]])}`);
    output.summary(`summary ${HOSTILE}`, true);
    expect(stderr.text()).not.toMatch(RAW_CONTROL);
    expect(stdout.text()).not.toMatch(RAW_CONTROL);
    // One line per error and log line, whatever newlines the text held.
    expect(stderr.text().split('\n')).toHaveLength(3);
    expect(stderr.text()).toContain('push-api: service said: a\\x1b[2J');
    expect(stdout.text().split('\n')[1]).toMatch(/^ {2}a\\x1b\[2J.*\\n.* {2}a\\x1b\[2J/);

    // The report parses back to the exact text, and holds no raw control or format character either.
    const jsonOut = capture();
    const report = { message: HOSTILE, [HOSTILE]: [HOSTILE, 1, null] };
    new Output({ json: true, verbose: false, stdout: jsonOut, stderr: capture() }).report(report);
    expect(JSON.parse(jsonOut.text())).toEqual(report);
    expect(jsonOut.text().slice(0, -1)).not.toMatch(RAW_CONTROL);
    expect(jsonOut.text()).toContain('\\u202e\\u2066\\u200b\\u2028\\u2029\\ufeff\\u00ad\\udb40\\udc41');
    expect(jsonOut.text().endsWith('}\n')).toBe(true);
  });
});

describe('--verbose stack traces', () => {
  it("keep the message's own newlines escaped, and the frames on their lines", () => {
    const stderr = capture();
    const output = new Output({ json: false, verbose: true, stdout: capture(), stderr });
    output.error('stopped', new Error(`forged\npush-api: all 1000 records sent\u001b[2J`));
    const lines = stderr.text().split('\n');
    expect(lines[1]).toBe('Error: forged\\npush-api: all 1000 records sent\\x1b[2J');
    expect(lines[2]).toMatch(/^ {4}at /);
    expect(stderr.text()).not.toMatch(RAW_CONTROL);
  });
});

describe('progress on a terminal', () => {
  function terminal() {
    const stderr = capture();
    stderr.isTTY = true;
    return { stderr, output: new Output({ json: false, verbose: false, stdout: capture(), stderr }) };
  }
  // cli-progress writes its own cursor moves; what must not appear is the hostile text's own sequences.
  const raw = ['\u202e', '\u001b[2J', '\u001b]0;', '\u001b]8;', '\u200b', '\u009b'];

  it('shows a file name escaped in the upload bars and their lines', async () => {
    const { stderr, output } = terminal();
    const view = await createUploadProgress(output, 10);
    const file = `a\u001b[2J\u001b]0;t\u0007\u202egnp.exe\u200b\u009b`;
    // The bars redraw on a timer: each state is given time to be drawn.
    const redraw = () => new Promise((resolve) => setTimeout(resolve, 250));
    view.update({ file, fileBytes: 5, fileTotal: 10, bytes: 5, totalBytes: 10 } as UploadProgress);
    await redraw();
    view.confirmed(file, 10);
    await redraw();
    view.stop();
    const text = stderr.text();
    for (const sequence of raw) expect(text).not.toContain(sequence);
    // Once in its bar, once in the line that says it was uploaded.
    expect(text.split('a\\x1b[2J\\x1b]0;t\\x07\\u202egnp.exe\\u200b\\x9b')).toHaveLength(3);
  });

  it('shows the detail of the publish bar escaped', async () => {
    const { stderr, output } = terminal();
    const progress = await createProgress(output, 'publish', 100);
    progress.update(50, `sent 1 | ${HOSTILE}`);
    progress.stop();
    const text = stderr.text();
    for (const sequence of raw) expect(text).not.toContain(sequence);
    expect(text).toContain('a\\x1b[2J');
  });
});

/**
 * The choke point is kept by this scan: nothing in src/cli writes to stdout or stderr, or calls
 * console, except terminal-text.ts. Output objects and cli-progress get the streams, never `.write`.
 */
describe('src/cli writes human text only through terminal-text.ts', () => {
  const root = resolve(import.meta.dirname, '../../src/cli');
  const allowed = new Map<string, RegExp>([
    ['terminal-text.ts', /[\s\S]*/],
    // Listens for the streams' write errors (a reader that went away, a full disk); writes one
    // constant line on stderr when stdout's report is lost, with only the error's code in it.
    [
      'closed-outputs.ts',
      /^(?:process\.(?:stdout|stderr)\.on\('error', \((?:error: NodeJS\.ErrnoException)?\) => \{|if \(error\.code === 'EPIPE' \|\| process\.stderr\.destroyed\) return;|process\.stderr\.write\()$/,
    ],
    // The last write before exit is empty: it only waits for both streams to flush.
    [
      'main.ts',
      /^process\.stdout\.write\('', \(\) => process\.stderr\.write\('', \(\) => setImmediate\(\(\) => process\.exit\(code\)\)\)\);$/,
    ],
  ]);
  const direct =
    /\b(?:process\.)?(?:stdout|stderr)\.write\s*\(|\bconsole\.\w+\s*\(|\bprocess\.(?:stdout|stderr)\b(?!\s*[,;)])/;

  function* files(dir: string): Generator<string> {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) yield* files(path);
      else if (entry.name.endsWith('.ts')) yield path;
    }
  }

  it('finds no direct write, console call or stray stream use', () => {
    const found: string[] = [];
    for (const path of files(root)) {
      const name = relative(root, path);
      const exception = allowed.get(name);
      readFileSync(path, 'utf8')
        .split('\n')
        .forEach((line, index) => {
          const code = line.trim();
          if (code.startsWith('*') || code.startsWith('//')) return;
          if (direct.test(code) && !exception?.test(code)) found.push(`${name}:${index + 1}: ${code}`);
        });
    }
    expect(found).toEqual([]);
  });
});
