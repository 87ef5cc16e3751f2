import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLoggedClient, createSdkLogger } from '../../examples/logging-with-pino.js';

interface LogLine {
  level: number;
  msg: string;
  component?: string;
  method?: string;
  path?: string;
  status?: number;
  operation?: string;
}

let emulator: RunningEmulator;

beforeAll(async () => {
  emulator = await startEmulator();
});

afterAll(async () => {
  await emulator?.close();
});

describe('logging-with-pino recipe', () => {
  it('logs one line per request and never a secret, token or signed query', async () => {
    const raw: string[] = [];
    const logger = createSdkLogger({ write: (line: string) => void raw.push(line) }, 'debug');
    const client = createLoggedClient(
      {
        clientId: emulator.mock.clientId,
        clientSecret: emulator.mock.clientSecret,
        authUrl: emulator.authUrl,
        baseUrl: emulator.baseUrl,
        scopeBase: emulator.mock.scopeBase,
      },
      logger,
    );
    const appId = emulator.mock.appId;
    const record = {
      created: '2025-01-31',
      amount: 42,
      currency: 'USD',
      identifier: 'a@example.com',
      type: 'expense',
      vendor: 'Acme',
    } as const;

    await client.uploads.upload(appId, [{ name: 'users.csv', data: 'email\na@example.com\n' }]);
    // A retry (warn) and a refused token (info) put the failure paths into the log as well.
    emulator.mock.faults.add({ match: { operation: 'finance' }, status: 429, retryAfter: 0 });
    await client.finance.publish(appId, [record]);
    emulator.mock.revokeAllTokens();
    await client.finance.publish(appId, [record]);

    const lines = raw.map((line) => JSON.parse(line) as LogLine);
    const requests = lines.filter((line) => line.msg === 'push-api-client request');
    expect(requests.map((line) => `${line.method} ${line.status}`)).toEqual([
      'POST 200', // token
      'GET 200', // upload addresses
      'PUT 200',
      'POST 429',
      'POST 200',
      'POST 401',
      'POST 200', // new token
      'POST 200',
    ]);
    expect(requests.every((line) => line.component === 'push-api-client' && line.path?.startsWith('/'))).toBe(true);
    expect(lines.some((line) => line.msg === 'push-api-client retrying' && line.level === 40)).toBe(true);

    const secrets = [emulator.mock.clientSecret, ...emulator.mock.state.tokens.map((token) => token.token)];
    expect(secrets).toHaveLength(3);
    const text = raw.join('');
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/signature=|Bearer |authorization/i);
  });
});
