/**
 * The CLI's part of the suite-wide secret scan: every command's output, human and `--json`, the
 * rejects and checkpoint files, and failure output with `--verbose`, scanned for the client secret
 * (in every encoding) and every token the emulator issued. Zero hits.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { DEMO_SCOPE_BASE, type RunningEmulator, SCOPE_NAMES, startEmulator } from 'push-api-client/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../support/cli/build.js';
import { CSV_HEADER, csvRows, killChildren, makeTempDir, type RunResult, runCli } from '../support/cli/run.js';
import { findSecrets, secretForms } from './scan.js';

const CLIENT_ID = 'scan-client';
const CLIENT_SECRET = 'cli-scan-s3cret+/=&%-value-that-must-never-print';
let cli: string;
let emulator: RunningEmulator;
const temp = makeTempDir();

beforeAll(async () => {
  cli = await buildCli();
  emulator = await startEmulator({
    credentials: [
      { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, scopes: SCOPE_NAMES.map((n) => `${DEMO_SCOPE_BASE}/${n}`) },
    ],
  });
}, 120_000);
afterEach(() => killChildren());
afterAll(async () => {
  await emulator.close();
  temp.remove();
});

function env(secret = CLIENT_SECRET): Record<string, string> {
  return {
    PUSH_CLIENT_ID: CLIENT_ID,
    PUSH_CLIENT_SECRET: secret,
    PUSH_AUTH_URL: emulator.authUrl,
    PUSH_BASE_URL: emulator.baseUrl,
    PUSH_SCOPE_BASE: DEMO_SCOPE_BASE,
  };
}

describe('CLI secret hygiene', () => {
  it('no output, rejects or checkpoint file holds the secret or an issued token', { timeout: 120_000 }, async () => {
    const { mock } = emulator;
    const app = mock.appId;
    const csv = temp.path('in.csv');
    // Valid rows, plus a broken one so that rejects has an "invalid" entry.
    writeFileSync(csv, `${CSV_HEADER}\n${csvRows(60)}not-a-time,abc,EUR,x,expense,v,broken\n`);
    writeFileSync(temp.path('secret.txt'), `${CLIENT_SECRET}\n`);
    writeFileSync(temp.path('upload.csv'), 'id,name\n1,a\n');
    const results: RunResult[] = [];
    const run = async (args: string[], secret?: string) => {
      results.push(await runCli(cli, args, { env: env(secret), timeoutMs: 60_000 }));
    };
    const publish = (...extra: string[]) => [
      'finance',
      'publish',
      '--app',
      app,
      '--batch-size',
      '10',
      '--concurrency',
      '1',
      '--rejects',
      temp.path('rejects.jsonl'),
      '--checkpoint',
      temp.path('checkpoint.json'),
      ...extra,
      csv,
    ];

    await run(['token']);
    await run(['token', '--json']);
    await run(['token', '--client-secret-file', temp.path('secret.txt'), '--json']);
    // A revoked token mid-run (401 → refresh), an ambiguous 502 (unknown → rejects) and a refused 422.
    mock.faults.add({ match: { operation: 'finance' }, status: 502, times: 1 });
    mock.faults.add({ match: { operation: 'finance' }, status: 422, times: 1 });
    mock.revokeAllTokens();
    // --verbose: a line per HTTP attempt, the token request, the 502 and the 422 included.
    await run(publish('--json', '--verbose'));
    await run(publish('--resend-unknown'));
    await run(['upload', '--app', app, '--verbose', temp.path('upload.csv')]);
    await run(['upload', '--app', app, '--json', temp.path('upload.csv')]);
    // Failures, with stacks: a wrong secret, an unknown app.
    await run(['token', '--verbose'], `${CLIENT_SECRET}-wrong`);
    await run(['finance', 'publish', '--app', 'no-such-app', '--verbose', csv]);

    const files = ['rejects.jsonl', 'checkpoint.json'].map((name) => temp.path(name));
    for (const file of files) expect(existsSync(file), file).toBe(true);
    const texts = [...results.flatMap((r) => [r.stdout, r.stderr]), ...files.map((f) => readFileSync(f, 'utf8'))];
    // Control: the scan sees real output (a JSON report and a rejects entry).
    expect(texts.join('\n')).toMatch(/"kind":"invalid"/);
    expect(results.some((r) => r.stdout.trim().startsWith('{'))).toBe(true);
    const attempts = texts.join('\n');
    for (const seen of [/push-api: http token POST /, / status=502 /, / status=422 /, /push-api: http upload PUT /]) {
      expect(attempts).toMatch(seen);
    }
    const tokens = mock.state.tokens.map((t) => t.token);
    expect(tokens.length).toBeGreaterThanOrEqual(4);
    expect(findSecrets(texts, [...secretForms(CLIENT_ID, CLIENT_SECRET), ...tokens])).toEqual([]);
  });
});
