/**
 * A service may answer its token endpoint and its data API on one address
 * (`{auth_url}` = `{base_url}`), and its storage host there too: the emulator, set up the same way,
 * must route each path to its operation.
 */
import { PushClient } from 'push-api-client';
import { createPushApiHandler, type EmulatorOptions } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { financeRecord } from '../support/records.js';

const RECORD = financeRecord();

describe('an emulator whose addresses share one origin and path', () => {
  it.each<[string, EmulatorOptions]>([
    ['token and data API on one address', { authUrl: 'https://push.example', baseUrl: 'https://push.example' }],
    [
      'all three on one address',
      { authUrl: 'https://push.example/', baseUrl: 'https://push.example', uploadUrl: 'https://push.example' },
    ],
    [
      'all three under one path',
      { authUrl: 'https://x.example/p', baseUrl: 'https://x.example/p', uploadUrl: 'https://x.example/p' },
    ],
    ['the storage host on the data API address', { uploadUrl: 'https://api.push.test' }],
    ['the storage host below the data path', { uploadUrl: 'https://api.push.test/services/push/v1' }],
  ])('%s: tokens, records and files all arrive', async (_, options) => {
    const emulator = createPushApiHandler(options);
    const client = new PushClient({ ...emulator.clientOptions(), fetch: emulator.fetch, env: {} });
    const report = await client.finance.publish(emulator.appId, [RECORD]);
    expect(report.recordsSent).toBe(1);
    const uploads = await client.uploads.upload(emulator.appId, [{ name: 'users.csv', data: 'id\n1\n' }]);
    expect(uploads.filesUploaded).toBe(1);
    expect(emulator.state.file(emulator.appId, 'users.csv')?.size).toBe(5);
    expect(emulator.state.requests.map((request) => [request.operation, request.status])).toEqual([
      ['token', 200],
      ['finance', 200],
      ['upload-urls', 200],
      ['upload', 200],
    ]);
  });

  it('still answers 404 to a path that is none of the operations', async () => {
    const emulator = createPushApiHandler({ authUrl: 'https://push.example', baseUrl: 'https://push.example' });
    const response = await emulator.fetch('https://push.example/services/push/v2/customer/apps/demo-app/finance', {
      method: 'POST',
    });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ code: '404', message: 'Not Found: no such path', success: false });
  });
});
