/**
 * An app id is one percent-encoded path segment: whatever characters it holds, the request
 * arrives at the emulator on the app's own path and can never reach another app or operation.
 */

import { ConfigurationError } from 'push-api-client';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { financeRecord } from '../support/records.js';

const APP_IDS = ['team a/b', '../victim-app', 'x?y=1#frag', '%2e%2e', 'ünï cödé/日本', 'a;b,c@d:e', '..%2Fvictim-app'];
let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startEmulator({ apps: ['victim-app', ...APP_IDS] });
});
afterAll(() => emulator.close());

const financePath = (appId: string) => `/services/push/v1/customer/apps/${encodeURIComponent(appId)}/finance`;
const uploadPath = (appId: string) => `/services/push/v1/customer/apps/${encodeURIComponent(appId)}/upload`;

describe('app ids that need URL encoding', () => {
  it.each(APP_IDS)('publishes and uploads for %j on its own encoded path only', async (appId) => {
    const { mock } = emulator;
    const client = clientFor(emulator, { maxRetries: 0 });
    const before = mock.state.requests.length;
    await client.finance.publishBatch(appId, [financeRecord(1, { transactionNumber: `app:${appId}` })]);
    await client.uploads.upload(appId, [{ name: 'x.csv', data: 'a,b\n' }]);
    const seen = mock.state.requests.slice(before).filter((r) => r.operation !== 'token');
    expect(seen.map((r) => [r.operation, r.path, r.status])).toEqual([
      ['finance', financePath(appId), 200],
      ['upload-urls', uploadPath(appId), 200],
      ['upload', `/storage/${encodeURIComponent(appId)}/x.csv`, 200],
    ]);
    expect(mock.state.records(appId).map((r) => r.transactionNumber)).toEqual([`app:${appId}`]);
    expect(mock.state.file(appId, 'x.csv')?.size).toBe(4);
    expect(mock.state.recordCount('victim-app')).toBe(0);
    expect(mock.state.files('victim-app')).toEqual([]);
  });

  it('refuses "." and ".." before any request, since URL parsing treats them as path steps', async () => {
    const { mock } = emulator;
    const client = clientFor(emulator, { maxRetries: 0 });
    const before = mock.state.requests.length;
    for (const appId of ['.', '..', '']) {
      await expect(client.finance.publishBatch(appId, [financeRecord(1)])).rejects.toBeInstanceOf(ConfigurationError);
      await expect(client.uploads.getUploadUrls(appId, ['x.csv'])).rejects.toBeInstanceOf(ConfigurationError);
    }
    expect(mock.state.requests.length).toBe(before);
  });
});
