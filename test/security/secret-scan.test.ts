import { inspect } from 'node:util';
import { PushClient, type PushClientOptions } from 'push-api-client';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReadyBearer } from '../../src/http/http-client.js';
import { recordingLogger } from '../support/recorders.js';
import { financeRecord } from '../support/records.js';

/**
 * Runs successes, 401 refreshes, token errors and API errors over real HTTP, captures every log
 * line, error message, `JSON.stringify(error)` and `util.inspect` of the client and its parts, and
 * scans all of it for the client secret and every token the emulator issued.
 */
let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startEmulator({ tokenTtlSeconds: 600 });
});
afterAll(() => emulator.close());

describe('secret hygiene', () => {
  it('no log line, error, JSON or inspect output contains the client secret or an issued token', async () => {
    const { mock } = emulator;
    const logger = recordingLogger();
    const captured: string[] = [];
    const errors: unknown[] = [];
    const options = (extra: Partial<PushClientOptions> = {}): PushClientOptions => ({
      clientId: mock.clientId,
      clientSecret: mock.clientSecret,
      authUrl: emulator.authUrl,
      baseUrl: emulator.baseUrl,
      scopeBase: mock.scopeBase,
      logger,
      maxRetries: 1,
      env: {},
      ...extra,
    });
    const client = new PushClient(options());
    const basic = new PushClient(options({ tokenAuthMethod: 'client_secret_basic' }));
    // Reports are scanned too; getToken's result is the token itself, so it is not.
    const attempt = async (work: () => Promise<unknown>, scanResult = true) => {
      try {
        const result = await work();
        if (scanResult) captured.push(JSON.stringify(result));
      } catch (error) {
        errors.push(error);
      }
    };

    // Successes.
    await attempt(() => client.tokens.getToken(), false);
    await attempt(() => basic.tokens.getToken(), false);
    await attempt(() => client.uploads.upload(mock.appId, [{ name: 'a.csv', data: 'id,name\n1,x\n' }]));
    await attempt(() =>
      client.finance.publish(
        mock.appId,
        Array.from({ length: 30 }, (_, i) => financeRecord(i)),
      ),
    );
    // 401s: revoked tokens are refreshed and the request re-sent.
    mock.revokeAllTokens();
    await attempt(() => client.finance.publishBatch(mock.appId, [financeRecord(1)]));
    mock.revokeAllTokens();
    mock.faults.add({ match: { operation: 'finance' }, status: 401, times: 2 });
    await attempt(() => client.finance.publishBatch(mock.appId, [financeRecord(2)]));
    // Token errors: a wrong secret (post and basic), a malformed token response, a 5xx storm.
    const wrong = { clientSecret: `${mock.clientSecret}-wrong` };
    await attempt(() => new PushClient(options(wrong)).tokens.getToken());
    await attempt(() =>
      new PushClient(options({ ...wrong, tokenAuthMethod: 'client_secret_basic' })).tokens.getToken(),
    );
    mock.faults.add({ match: { operation: 'token' }, status: 200, body: { access_token: 'leaky-token-value' } });
    await attempt(() => client.tokens.getToken({ forceRefresh: true }), false);
    mock.faults.add({ match: { operation: 'token' }, status: 503, times: 2 });
    await attempt(() => client.tokens.getToken({ forceRefresh: true }), false);
    // API errors: unknown app, bad records, 5xx.
    await attempt(() => client.finance.publishBatch('no-such-app', [financeRecord(3)]));
    await attempt(() => client.finance.publishBatch(mock.appId, [{ ...financeRecord(4), amount: Number.NaN }]));
    mock.faults.add({ match: { operation: 'finance' }, status: 502, times: 1 });
    await attempt(() => client.finance.publishBatch(mock.appId, [financeRecord(5)]));
    await attempt(() => client.uploads.getUploadUrls('no-such-app', ['x.csv']));

    expect(errors.length).toBeGreaterThanOrEqual(7);
    for (const error of errors) {
      captured.push(String(error), JSON.stringify(error), inspect(error, { depth: Infinity, showHidden: true }));
    }
    for (const subject of [client, basic, client.tokens, client.uploads, client.finance]) {
      captured.push(inspect(subject, { depth: Infinity, showHidden: true }), JSON.stringify(subject));
    }
    for (const line of logger.lines) captured.push(line.message, inspect(line.fields, { depth: Infinity }));

    const tokens = mock.state.tokens.map((t) => t.token);
    expect(tokens.length).toBeGreaterThanOrEqual(4);
    const secrets = [
      mock.clientSecret,
      encodeURIComponent(mock.clientSecret),
      Buffer.from(`${mock.clientId}:${mock.clientSecret}`).toString('base64'),
      'leaky-token-value',
      ...tokens,
    ];
    const text = captured.join('\n');
    expect(logger.lines.length).toBeGreaterThan(10);
    // Control: the scanned text does hold the client's description, so the scan sees real output.
    expect(text).toContain(`clientId: '${mock.clientId}'`);
    for (const secret of secrets) expect(text.includes(secret), `found a secret: ${secret.slice(0, 4)}…`).toBe(false);
  });

  it('a token held for a request between its announcement and its send is out of sight', () => {
    const token = 'held-token-value-0123456789';
    const spec = { operation: 'finance', url: new URL('https://api.push.test/x'), bearer: new ReadyBearer(token) };
    const shown = [
      inspect(spec, { depth: Infinity, showHidden: true }),
      JSON.stringify(spec),
      inspect({ ...spec }, { depth: Infinity, showHidden: true }),
      String(spec.bearer),
    ].join('\n');
    expect(shown).toContain('ReadyBearer');
    expect(shown).not.toContain(token);
    expect(Object.values(spec.bearer)).toEqual([]);
    // No static accessor: only the transport's module reads it.
    expect(Object.getOwnPropertyNames(ReadyBearer).sort()).toEqual(['length', 'name', 'prototype']);
  });
});
