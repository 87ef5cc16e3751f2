/** Options publish and upload share are checked alike, before any request. */
import { ConfigurationError } from 'push-api-client';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { financeRecords } from '../support/records.js';

let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startEmulator();
});
afterAll(() => emulator.close());

describe('adaptive', () => {
  it.each([['false'], [0], [null]])(
    '%j is a ConfigurationError for publish, as for upload, and nothing is sent',
    async (value) => {
      const client = clientFor(emulator);
      const adaptive = value as unknown as boolean;
      await expect(client.finance.publish(emulator.mock.appId, financeRecords(2), { adaptive })).rejects.toThrow(
        ConfigurationError,
      );
      await expect(
        client.uploads.upload(emulator.mock.appId, [{ name: 'a.csv', data: 'a' }], { adaptive }),
      ).rejects.toThrow(ConfigurationError);
      expect(emulator.mock.state.requests).toEqual([]);
    },
  );
});
