/**
 * Every input accepts readonly data: this file must type-check (`npm run typecheck` covers it)
 * with each argument frozen `as const`, and the calls really work against the emulator.
 */
import { createPushApiMock } from 'push-api-client/testing/msw';
import { describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';

const scopeBase = 'https://api.push.test';
const credentials = [
  { clientId: 'ro-client', clientSecret: 'ro-secret-1', scopes: [`${scopeBase}/connector.write`] },
] as const;
const apps = ['ro-app'] as const;
const records = [
  { created: '2025-01-31', amount: 1, currency: 'USD', identifier: 'a@example.com', type: 'expense', vendor: 'Acme' },
  { created: '2025-02-01', amount: 2, currency: 'EUR', identifier: 'b@example.com', type: 'invoice', vendor: 'Beta' },
] as const;

describe('readonly inputs', () => {
  it('publishBatch, publish, getUploadUrls, upload, scopes and emulator options take `as const` data', async () => {
    const mock = createPushApiMock({ credentials, apps });
    const scopes = [`${scopeBase}/connector.write`] as const;
    const client = clientFor(mock, { clientId: 'ro-client', clientSecret: 'ro-secret-1', scopes });

    await expect(client.finance.publishBatch('ro-app', records)).resolves.toEqual({ success: true });
    const report = await client.finance.publish('ro-app', records);
    expect(report.recordsSent).toBe(2);

    const names = ['users.csv'] as const;
    const urls = await client.uploads.getUploadUrls('ro-app', names);
    expect(Object.keys(urls)).toEqual(['users.csv']);
    const files = [{ name: 'users.csv', data: 'email\na@example.com\n' }] as const;
    expect((await client.uploads.upload('ro-app', files)).filesUploaded).toBe(1);
    expect(mock.state.recordCount('ro-app')).toBe(4);
  });
});
