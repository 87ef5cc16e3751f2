/**
 * What hooks and logs say of each kind of re-send (docs/configuration.md, Hooks): a re-send that
 * waits is a `retry` event and a `warn` line, for every operation alike; the re-send after a 401
 * and the one after a fresh upload address are not retries: no `retry` event, an `info` line.
 */
import type { PushClientHooks } from 'push-api-client';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { financeRecords } from '../support/records.js';

let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startEmulator();
});
afterEach(() => {
  emulator.mock.faults.clear();
  emulator.mock.reset();
});
afterAll(() => emulator.close());

function recorded() {
  const events: string[] = [];
  const lines: string[] = [];
  const hooks: PushClientHooks = {
    request: (event) => events.push(`request ${event.operation} #${event.attempt} call ${event.callId}`),
    retry: (event) =>
      events.push(
        `retry ${event.operation} #${event.attempt} call ${event.callId} ${event.status} ${event.delayMs}${event.rateLimited ? ' rate-limited' : ''}`,
      ),
  };
  const logger = {
    debug() {},
    error() {},
    info: (message: string) => lines.push(`info ${message}`),
    warn: (message: string, fields?: Record<string, unknown>) =>
      lines.push(`warn ${message}${fields?.rateLimited === true ? ' rate-limited' : ''}`),
  };
  const client = clientFor(emulator, { hooks, logger, backoff: { initialDelayMs: 0, maxDelayMs: 0 } });
  return { client, events, lines };
}

describe('a re-send that waits', () => {
  it.each([
    ['token', 'token'],
    ['upload-urls', 'upload-urls'],
    ['upload', 'upload'],
    ['finance', 'finance'],
  ] as const)('after a 503 of %s is one retry event and one warn line, of the same shape', async (_, operation) => {
    const { client, events, lines } = recorded();
    emulator.mock.faults.add({ match: { operation }, status: 503, retryAfter: 0 });
    if (operation === 'finance') await client.finance.publish(emulator.mock.appId, financeRecords(1));
    else await client.uploads.upload(emulator.mock.appId, [{ name: 'a.csv', data: 'a' }]);
    const retries = events.filter((event) => event.startsWith('retry'));
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatch(new RegExp(`^retry ${operation} #1 call \\d+ 503 0$`));
    expect(lines).toEqual(['warn push-api-client retrying']);
  });

  it("after a publish's 429 is one retry event and one warn line, both marked rate-limited (its patience uses up no retry)", async () => {
    const { client, events, lines } = recorded();
    emulator.mock.faults.add({ match: { operation: 'finance' }, status: 429, retryAfter: 0 });
    const report = await client.finance.publish(emulator.mock.appId, financeRecords(1));
    expect(report.recordsSent).toBe(1);
    const retries = events.filter((event) => event.startsWith('retry'));
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatch(/^retry finance #1 call \d+ 429 0 rate-limited$/);
    expect(lines).toEqual(['warn push-api-client retrying rate-limited']);
  });
});

describe('a re-send that mends a refusal', () => {
  it('after a 401 stays in its attempt: no retry event, an info line', async () => {
    const { client, events, lines } = recorded();
    await client.tokens.getToken();
    emulator.mock.faults.add({ match: { operation: 'finance' }, status: 401 });
    const report = await client.finance.publish(emulator.mock.appId, financeRecords(1));
    expect(report.recordsSent).toBe(1);
    expect(events.filter((event) => event.startsWith('retry'))).toEqual([]);
    const finance = events.filter((event) => event.startsWith('request finance'));
    expect(finance).toHaveLength(2);
    expect(finance[1]).toBe(finance[0]);
    expect(lines).toEqual(['info push-api-client access token rejected; refreshing and re-sending once']);
  });

  it('with a fresh upload address is the next attempt of the same call: no retry event, an info line', async () => {
    const { client, events, lines } = recorded();
    emulator.mock.faults.add({
      match: { operation: 'upload' },
      status: 403,
      body: '<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>',
    });
    const report = await client.uploads.upload(emulator.mock.appId, [{ name: 'a.csv', data: 'a' }]);
    expect(report.files[0]).toMatchObject({ status: 'uploaded', attempts: 2 });
    expect(events.filter((event) => event.startsWith('retry'))).toEqual([]);
    const puts = events.filter((event) => event.startsWith('request upload '));
    expect(puts.map((event) => event.replace(/ call \d+$/, ''))).toEqual(['request upload #1', 'request upload #2']);
    expect(new Set(puts.map((event) => event.split(' call ')[1])).size).toBe(1);
    expect(lines).toEqual(['info push-api-client request refused; fetching a fresh upload address, re-sending once']);
  });
});
