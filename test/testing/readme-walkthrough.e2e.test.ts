/**
 * Runs docs/testing.md's "Walkthrough with curl" as written: every command is read from that page (none
 * is copied here), the emulators are started with the page's arguments (on free ports instead of
 * 4010/4011), the shell commands run in order in one bash script (so AUTH, APP, TOKEN, URL... carry
 * from one command to the next), and each command's output is compared with the output the page
 * shows. Only volatile parts are normalized: tokens, signatures, expiry timestamps, request ids, Date
 * headers, the seconds of a rate window's Retry-After and ports; status lines, headers, ETags and bodies must match as shown.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorCommand } from '../../src/cli/commands/emulator.js';
import { readDoc } from '../support/doc-files.js';

const DOC = 'docs/testing.md';
const SECTION = '## Walkthrough with curl';
const EMULATOR_PREFIX = 'npx push-api emulator';

interface Block {
  language: string;
  /** 1-based line of the block's first body line. */
  line: number;
  body: string[];
}

interface Step {
  kind: 'emulator' | 'shell';
  command: string;
  /** The output the page shows, without trailing blank lines ('' when none is shown). */
  expected: string;
  /** 1-based line of the command. */
  line: number;
}

/** The fenced blocks between the section's heading and the next heading of the same or a higher level. */
function sectionBlocks(markdown: string): Block[] {
  const lines = markdown.split(/\r?\n/);
  const start = lines.indexOf(SECTION);
  if (start < 0) throw new Error(`${DOC} has no "${SECTION}" section`);
  const blocks: Block[] = [];
  let open: Block | undefined;
  for (let index = start + 1; index < lines.length; index++) {
    const text = lines[index] as string;
    if (open) {
      if (/^```\s*$/.test(text)) {
        blocks.push(open);
        open = undefined;
      } else open.body.push(text);
      continue;
    }
    if (/^#{1,2} /.test(text)) break;
    const fence = /^```\s*([\w-]*)/.exec(text);
    if (fence) open = { language: (fence[1] ?? '').toLowerCase(), line: index + 2, body: [] };
  }
  if (open) throw new Error(`unclosed code block at ${DOC}:${open.line - 1}`);
  return blocks;
}

/** A command goes on to the next line after a trailing `\`, `|`, `&&`, or inside a for/while loop. */
function continues(command: string): boolean {
  const last = command.split('\n').at(-1) ?? '';
  const count = (pattern: RegExp) => command.match(pattern)?.length ?? 0;
  return /(\\|\||&&)\s*$/.test(last) || count(/(?:^|[;\s])do(?=\s|$)/g) > count(/(?:^|[;\s])done(?=[\s;|&]|$)/g);
}

function stepsOf(blocks: readonly Block[]): Step[] {
  const steps: Step[] = [];
  for (const block of blocks) {
    if (block.language === 'sh' || block.language === 'bash') {
      // A plain script: no prompt and no output.
      steps.push({ kind: 'shell', command: block.body.join('\n'), expected: '', line: block.line });
      continue;
    }
    if (block.language !== 'console')
      throw new Error(`unexpected \`\`\`${block.language} block at ${DOC}:${block.line}`);
    let current: { command: string; output: string[]; line: number } | undefined;
    let open = false;
    const flush = () => {
      if (!current) return;
      const expected = current.output.join('\n').replace(/\s+$/, '');
      const kind = current.command.startsWith(EMULATOR_PREFIX) ? 'emulator' : 'shell';
      steps.push({ kind, command: current.command, expected, line: current.line });
    };
    block.body.forEach((text, index) => {
      if (current && open) {
        current.command += `\n${text}`;
        open = continues(current.command);
      } else if (text.startsWith('$ ')) {
        flush();
        current = { command: text.slice(2), output: [], line: block.line + index };
        open = continues(current.command);
      } else if (current) current.output.push(text);
      else if (text.trim() !== '') throw new Error(`output before any command at ${DOC}:${block.line + index}`);
    });
    flush();
  }
  return steps;
}

/** `--port N` and the other arguments of a documented `npx push-api emulator ...` line. */
function emulatorArgs(command: string): { port: string; rest: string[] } {
  const args = command.slice(EMULATOR_PREFIX.length).trim().split(/\s+/).filter(Boolean);
  const at = args.indexOf('--port');
  const port = args[at + 1];
  if (at < 0 || !port) throw new Error(`no --port in "${command}"`);
  return { port, rest: [...args.slice(0, at), ...args.slice(at + 2)] };
}

const HEADER = /^[A-Za-z][A-Za-z0-9-]*: /;

/** The status lines and bodies of `curl -i` output, without the header lines and their blank line. */
function withoutHeaders(text: string): string {
  const kept: string[] = [];
  let inHeaders = false;
  for (const line of text.split('\n')) {
    if (/^HTTP\/[\d.]+ \d{3}/.test(line)) {
      kept.push(line);
      inHeaders = true;
    } else if (inHeaders) {
      if (line === '') inHeaders = false;
      else if (!HEADER.test(line)) throw new Error(`not a header line: ${line}`);
    } else kept.push(line);
  }
  return kept.join('\n');
}

/**
 * Replaces what differs from run to run, and nothing else: each rule matches one narrow shape and
 * keeps the key it belongs to, so a wrong status, header, message or field still differs.
 */
function normalize(text: string): string {
  return (
    text
      .replace(/\r\n/g, '\n')
      // curl before 8.x sends `Expect: 100-continue` for every PUT upload, later ones only above 1 MiB.
      .replace(/^HTTP\/1\.1 100 Continue\n\n/gm, '')
      .replace(/"access_token":"[A-Za-z0-9_-]{20,}"/g, '"access_token":"<token>"')
      .replace(/([?&])expires=\d+/g, '$1expires=<expires>')
      .replace(/([?&])signature=(?:[0-9a-f]{64}|[0-9a-f]{4}…)/g, '$1signature=<signature>')
      .replace(/^(x-request-id): [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/gim, '$1: <request-id>')
      .replace(/^(date): \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/gim, '$1: <date>')
      // The seconds left in the rate window: 60 when the loop's three requests come within a second.
      .replace(/^(retry-after): (?:5\d|60)$/gim, '$1: 60')
      .split('\n')
      .map((line) => line.trimEnd())
      .join('\n')
      .replace(/\s+$/, '')
  );
}

function runBash(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile('bash', ['-c', script], { cwd, env, timeout: 30_000, maxBuffer: 4 * 1024 * 1024 }, (error, stdout) => {
      if (error) reject(new Error(`walkthrough script failed: ${error.message}\n${stdout}`));
      else resolvePromise(stdout);
    });
  });
}

const steps = stepsOf(sectionBlocks(readDoc(DOC)));
const shellSteps = steps.filter((step) => step.kind === 'shell');
const temp = mkdtempSync(join(tmpdir(), 'readme-walkthrough-'));
const running: { stop: AbortController; done: Promise<unknown> }[] = [];
/** Documented address (`127.0.0.1:4010`) to the real one, and back. */
const toReal = new Map<string, string>();
const fromReal = new Map<string, string>();
const banners = new Map<Step, string>();
const outputs: { step: Step; actual: string; status: number }[] = [];

async function startReadmeEmulator(step: Step): Promise<void> {
  const { port, rest } = emulatorArgs(step.command);
  const written: string[] = [];
  const stop = new AbortController();
  const command = emulatorCommand({ write: (text) => written.push(text), stopSignal: stop.signal }).exitOverride();
  const done = command.parseAsync([...rest, '--port', '0'], { from: 'user' });
  running.push({ stop, done: done.catch(() => undefined) });
  const deadline = Date.now() + 10_000;
  while (!written.join('').includes('Press Ctrl+C') && Date.now() < deadline) {
    await Promise.race([done, new Promise((wake) => setTimeout(wake, 20))]);
  }
  const banner = written.join('');
  const address = /listening on http:\/\/(127\.0\.0\.1:\d+)\n/.exec(banner)?.[1];
  if (!address) throw new Error(`emulator from ${DOC}:${step.line} did not start:\n${banner}`);
  toReal.set(`127.0.0.1:${port}`, address);
  fromReal.set(address, `127.0.0.1:${port}`);
  banners.set(step, banner);
}

function withAddresses(text: string, map: ReadonlyMap<string, string>, strict: boolean): string {
  return text.replace(/127\.0\.0\.1:\d+/g, (address) => {
    const mapped = map.get(address);
    if (mapped === undefined && strict) throw new Error(`no emulator for ${address}`);
    return mapped ?? address;
  });
}

beforeAll(async () => {
  for (const step of steps) if (step.kind === 'emulator') await startReadmeEmulator(step);

  // curl reads this instead of any user configuration: bounded requests, never through a proxy.
  writeFileSync(join(temp, '.curlrc'), 'max-time = 10\nnoproxy = "*"\n');
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: temp, CURL_HOME: temp, LANG: 'C.UTF-8' };
  const marker = `@@walkthrough-${randomUUID()}@@`;
  const script = ['exec 2>&1', `printf '%s\\n' '${marker} start'`];
  shellSteps.forEach((step, index) => {
    script.push(withAddresses(step.command, toReal, true), `printf '\\n%s %s %s\\n' '${marker}' ${index} "$?"`);
  });
  const stdout = await runBash(script.join('\n'), temp, env);

  let cursor = stdout.indexOf(`${marker} start\n`);
  if (cursor !== 0) throw new Error(`unexpected output before the first command:\n${stdout}`);
  cursor = `${marker} start\n`.length;
  shellSteps.forEach((step, index) => {
    // "<output>\n<marker> <index> <exit status>\n": the marker closes the output before it.
    const close = `\n${marker} ${index} `;
    const end = stdout.indexOf(close, cursor);
    const lineEnd = stdout.indexOf('\n', end + close.length);
    if (end < 0 || lineEnd < 0) throw new Error(`no output for ${DOC}:${step.line}:\n${stdout.slice(cursor)}`);
    outputs.push({
      step,
      actual: stdout.slice(cursor, end),
      status: Number(stdout.slice(end + close.length, lineEnd)),
    });
    cursor = lineEnd + 1;
  });
  if (cursor !== stdout.length) throw new Error(`unexpected output after the last command:\n${stdout.slice(cursor)}`);
}, 60_000);

afterAll(async () => {
  for (const { stop, done } of running) {
    stop.abort();
    await done;
  }
  rmSync(temp, { recursive: true, force: true });
});

/** What a command printed, as the page would show it: documented ports, volatile parts normalized. */
function shown(step: Step, actual: string): string {
  const text = normalize(withAddresses(actual, fromReal, false));
  // `-i` examples whose documented output has no header lines show only the status line and the body.
  const showsHeaders = step.expected.split('\n').some((line) => HEADER.test(line));
  return /\bcurl\b[^\n]*\s-i\b/.test(step.command) && !showsHeaders ? withoutHeaders(text) : text;
}

describe('docs/testing.md "Walkthrough with curl"', () => {
  it('is read from the page: emulators, commands and the outputs they show', () => {
    expect(steps.filter((step) => step.kind === 'emulator').map((step) => emulatorArgs(step.command).port)).toEqual([
      '4010',
      '4011',
    ]);
    expect(shellSteps.length).toBeGreaterThanOrEqual(18);
    expect(shellSteps.filter((step) => step.expected !== '').length).toBeGreaterThanOrEqual(13);
    // Loopback only: every address the commands use is one of the emulators started here.
    const commands = shellSteps.map((step) => step.command).join('\n');
    for (const [url] of commands.matchAll(/https?:\/\/[^/\s'"]+/g)) {
      expect(url === 'https://api.push.test' || toReal.has(url.replace('http://', ''))).toBe(true);
    }
    expect(outputs).toHaveLength(shellSteps.length);
  });

  it('prints the banner shown for `npx push-api emulator --port 4010`', () => {
    const [first] = steps;
    expect(first?.kind).toBe('emulator');
    expect(first?.expected).toMatch(/^push-api emulator listening on /);
    expect(normalize(withAddresses(banners.get(first as Step) ?? '', fromReal, true))).toBe(
      normalize(first?.expected ?? ''),
    );
  });

  it.each(shellSteps.map((step) => [`${DOC}:${step.line} $ ${step.command.split('\n')[0]}`, step] as const))(
    '%s',
    (_name, step) => {
      const result = outputs.find((output) => output.step === step);
      expect(result, 'the command ran').toBeDefined();
      const { actual, status } = result as { actual: string; status: number };
      expect(status, `exit status, output:\n${actual}`).toBe(0);
      if (step.expected === '') expect(actual).toBe('');
      else {
        expect(actual.trim(), 'printed something').not.toBe('');
        expect(shown(step, actual)).toBe(normalize(step.expected));
      }
    },
  );

  it('shows every row of the spec error table, in the spec error shape', () => {
    const seen = new Set<number>();
    let errorBodies = 0;
    for (const { actual } of outputs) {
      let status: number | undefined;
      for (const line of actual.replace(/\r\n/g, '\n').split('\n')) {
        const statusLine = /^HTTP\/1\.1 (\d{3}) /.exec(line);
        if (statusLine) status = Number(statusLine[1]);
        if (!line.startsWith('{"code"')) continue;
        const body = JSON.parse(line) as Record<string, unknown>;
        expect(Object.keys(body).sort()).toEqual(['code', 'message', 'success']);
        expect(body.code).toBe(String(status));
        expect(body.success).toBe(false);
        expect(body.message).toMatch(/^[A-Z][\w ]+: \S/);
        seen.add(status as number);
        errorBodies++;
      }
    }
    // Every row of the spec's table; the control-route examples add an injected 503.
    expect([...seen].sort()).toEqual([400, 401, 403, 404, 422, 429, 503]);
    expect(errorBodies).toBeGreaterThanOrEqual(6);
  });

  it('shows the RFC 6749 error of the token endpoint and the object-store errors', () => {
    const all = outputs.map((output) => output.actual).join('\n');
    const oauth = all.split('\n').find((line) => line.startsWith('{"error"'));
    expect(Object.keys(JSON.parse(oauth ?? '{}'))).toEqual(['error', 'error_description']);
    expect(all).toContain('<Code>SignatureDoesNotMatch</Code>');
    expect(all).toContain('<Code>MissingContentLength</Code>');
  });

  it('normalizes only volatile parts', () => {
    const a = '{"access_token":"HZO5E1wh9qarLUBqM2S1uMYLJwhxl7I8RairHMeT63s","token_type":"Bearer","expires_in":3600}';
    const b = '{"access_token":"Zk3Qx0vZ9yE1qH6c7bJmL2nR4tW8uA5sD0fG1hJ2kL3","token_type":"Bearer","expires_in":3600}';
    expect(normalize(a)).toBe(normalize(b));
    expect(normalize(a)).not.toBe(normalize(b.replace('3600', '60')));
    expect(normalize('HTTP/1.1 400 Bad Request')).not.toBe(normalize('HTTP/1.1 401 Unauthorized'));
    expect(normalize('x-request-id: 3f4a41a3-f938-41e7-b267-b67f439e94d8')).toBe('x-request-id: <request-id>');
    expect(normalize('etag: "30fe1a64fe3930b9e0526342bd6bba4e"')).toBe('etag: "30fe1a64fe3930b9e0526342bd6bba4e"');
    expect(normalize('?type=users&expires=1795314932&id=1&signature=2f56…')).toBe(
      normalize(`?type=users&expires=1&id=1&signature=${'ab'.repeat(32)}`),
    );
    expect(normalize('?type=users&expires=1&id=1')).not.toBe(normalize('?type=other&expires=1&id=2'));
    expect(normalize('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\netag: "x"')).toBe('HTTP/1.1 200 OK\netag: "x"');
    expect(withoutHeaders('HTTP/1.1 401 Unauthorized\ncontent-type: application/json\n\n{"code":"401"}')).toBe(
      'HTTP/1.1 401 Unauthorized\n{"code":"401"}',
    );
  });
});
