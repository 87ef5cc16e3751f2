/**
 * Text a hostile service or a hostile input file chooses never reaches the operator's terminal
 * raw: every control and format character it holds is shown escaped, on stdout and on stderr.
 * Real CLI processes against a hostile service on 127.0.0.1.
 */
import { writeFileSync } from 'node:fs';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildCli } from '../support/cli/build.js';
import { firstRawControl } from '../support/cli/control-chars.js';
import { jsonlRecord, killChildren, makeTempDir, type RunResult, runCli } from '../support/cli/run.js';
import {
  HOSTILE_CLIENT_ID,
  HOSTILE_SECRET,
  type HostileService,
  useHostileService,
} from '../support/hostile-service.js';

/** Clears the screen, retitles the window, forges an OSC 8 link, hides the line behind \r, reverses the text. */
const PAYLOAD =
  '\u001b[2J\u001b]0;pwned\u0007\u001b]8;;https://evil.test/login\u0007log in again\u001b]8;;\u0007\rOK\u202egnp.exe\u009b31m';
/** How the payload must show: the same characters, escaped. */
const ESCAPED =
  '\\x1b[2J\\x1b]0;pwned\\x07\\x1b]8;;https://evil.test/login\\x07log in again\\x1b]8;;\\x07\\rOK\\u202egnp.exe\\x9b31m';

const start = useHostileService();
let cli: string;
let temp: ReturnType<typeof makeTempDir>;

beforeAll(async () => {
  cli = await buildCli();
}, 60_000);
beforeEach(() => {
  temp = makeTempDir();
});
afterEach(killChildren);
afterEach(() => temp.remove());

function env(service: HostileService): Record<string, string> {
  return {
    PUSH_CLIENT_ID: HOSTILE_CLIENT_ID,
    PUSH_CLIENT_SECRET: HOSTILE_SECRET,
    PUSH_AUTH_URL: service.url,
    PUSH_BASE_URL: service.url,
    PUSH_SCOPE_BASE: 'https://api.push.test',
  };
}

function expectNeutralized(result: RunResult, escaped = ESCAPED): void {
  expect(firstRawControl(result.stdout)).toBeUndefined();
  expect(firstRawControl(result.stderr)).toBeUndefined();
  expect(result.stdout + result.stderr).toContain(escaped);
}

function writeInput(name: string, text: string): string {
  const path = temp.path(name);
  writeFileSync(path, text);
  return path;
}

describe('push-api prints what others chose escaped', () => {
  it("escapes a token endpoint's error_description", async () => {
    const service = await start(({ route }, res) => {
      if (route !== 'token') return false;
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'invalid_client', error_description: PAYLOAD }));
      return true;
    });
    const result = await runCli(cli, ['token'], { env: env(service) });
    expect(result.code).not.toBe(0);
    expectNeutralized(result);
  });

  it("escapes a data API error's message, and keeps --json exact", async () => {
    const service = await start(({ route }, res) => {
      if (route !== 'finance') return false;
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ success: false, code: 'unauthorized', message: PAYLOAD }));
      return true;
    });
    const input = writeInput('in.jsonl', `${jsonlRecord(1)}\n`);
    const human = await runCli(cli, ['finance', 'publish', '--app', 'app-1', input], { env: env(service) });
    expect(human.code).not.toBe(0);
    expectNeutralized(human);

    const json = await runCli(cli, ['finance', 'publish', '--app', 'app-1', '--json', input], { env: env(service) });
    expect(firstRawControl(json.stderr)).toBeUndefined();
    // The report is exact JSON: it parses back to the service's very text, and holds no raw control.
    expect(firstRawControl(json.stdout)).toBeUndefined();
    const report = JSON.parse(json.stdout) as { error?: { message?: string } };
    expect(report.error?.message).toContain(PAYLOAD);
  });

  it("escapes a storage host's XML <Message>", async () => {
    const service = await start(({ route }, res) => {
      if (route !== 'storage') return false;
      res.writeHead(403, { 'content-type': 'application/xml' });
      res.end(`<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message>${PAYLOAD}</Message></Error>`);
      return true;
    });
    const input = writeInput('users.csv', 'email,name\na@example.com,A\n');
    const result = await runCli(cli, ['upload', '--app', 'app-1', '--type', 'users', input], { env: env(service) });
    expect(result.code).not.toBe(0);
    expectNeutralized(result);
  });

  it('escapes an input line quoted in a JSONL parse error', async () => {
    const service = await start();
    // V8 quotes the start of a line it cannot parse in its message.
    const input = writeInput('bad.jsonl', `${jsonlRecord(1)}\nnot json ${PAYLOAD}\n`);
    const result = await runCli(cli, ['finance', 'publish', '--app', 'app-1', '--dry-run', input], {
      env: env(service),
    });
    expectNeutralized(result, '"not json \\x1b[');
  });

  it('escapes an unknown CSV column name', async () => {
    const service = await start();
    const header = `created,amount,currency,identifier,type,vendor,"${PAYLOAD}"`;
    const input = writeInput('odd.csv', `${header}\n1704067200000,1,EUR,u1,expense,Acme,x\n`);
    const result = await runCli(cli, ['finance', 'publish', '--app', 'app-1', '--dry-run', input], {
      env: env(service),
    });
    // An ignored column is listed in the summary, quoted as a JSON string (so its spaces show),
    // whose escapes are JSON's own; what JSON leaves raw (C1) is escaped by the terminal rule.
    expectNeutralized(result, '\\u001b[2J');
    expect(result.stdout + result.stderr).toContain('\\x9b31m');
    // Refused under --strict-columns: the error names the column, escaped the same way.
    const strict = await runCli(cli, ['finance', 'publish', '--app', 'app-1', '--dry-run', '--strict-columns', input], {
      env: env(service),
    });
    expect(strict.code).toBe(2);
    expectNeutralized(strict, '[2J');
  });

  it('escapes a file name in the summary and the per-file lines', async () => {
    const service = await start();
    // Control characters in a name are refused by the SDK; bidi and zero-width ones are not.
    const name = `users\u202evsc.\u200bexe`;
    const input = writeInput(name, 'email,name\na@example.com,A\n');
    const result = await runCli(cli, ['upload', '--app', 'app-1', '--type', 'users', input], { env: env(service) });
    if (result.code !== 0) throw new Error(result.stderr);
    expectNeutralized(result, 'users\\u202evsc.\\u200bexe');
    expect(service.on('storage')).toHaveLength(1);
  });

  it('escapes a request id in --verbose lines', async () => {
    const service = await start(({ route }, res) => {
      if (route !== 'finance') return false;
      // Header values may carry bytes 0x80-0xff: 0x9b is CSI in the C1 set.
      res.writeHead(404, { 'content-type': 'application/json', 'x-request-id': 'req-\u009b2J-\u0085end' });
      res.end(JSON.stringify({ success: false, code: 'not_found', message: 'no app' }));
      return true;
    });
    const input = writeInput('in.jsonl', `${jsonlRecord(1)}\n`);
    const result = await runCli(cli, ['finance', 'publish', '--app', 'app-1', '--verbose', input], {
      env: env(service),
    });
    expect(result.code).not.toBe(0);
    expectNeutralized(result, 'req-\\x9b2J-\\x85end');
  });

  it("escapes commander's echo of an unknown option", async () => {
    const service = await start();
    const result = await runCli(cli, ['token', `--bogus\u001b]0;pwned\u0007`], { env: env(service) });
    expect(result.code).toBe(2);
    expectNeutralized(result, '--bogus\\x1b]0;pwned\\x07');
  });
});
