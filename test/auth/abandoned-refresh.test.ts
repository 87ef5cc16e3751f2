/**
 * A token request that nobody waits for any more is not left running: a publish already dropped
 * its early token request when it no longer needed it; an upload, a publishBatch, a
 * getUploadUrls and a getToken whose caller aborted while the token was on its way do the same,
 * so that the process is not kept alive by it (up to its timeout, times its retries).
 */
import type { ServerResponse } from 'node:http';
import type { PushClient } from 'push-api-client';
import { AbortError, UploadStoppedError } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { HOSTILE_APP_ID, useHostileService } from '../support/hostile-service.js';
import { financeRecords } from '../support/records.js';

const startService = useHostileService();

/** A token endpoint that never answers; `closed` resolves when the client hung up on a request. */
async function silentTokenEndpoint() {
  const held: ServerResponse[] = [];
  let hungUp: () => void = () => {};
  const closed = new Promise<string>((resolve) => {
    hungUp = () => resolve('hung up');
  });
  const service = await startService((request, res) => {
    if (request.route !== 'token') return false;
    held.push(res);
    res.on('close', () => {
      if (!res.writableEnded) hungUp();
    });
    return true;
  });
  return { service, closed };
}

function within<T>(promise: Promise<T>, ms: number): Promise<T | 'still open'> {
  return Promise.race([promise, new Promise<'still open'>((resolve) => setTimeout(() => resolve('still open'), ms))]);
}

const calls: [string, (client: PushClient, signal: AbortSignal) => Promise<unknown>][] = [
  ['upload', (client, signal) => client.uploads.upload(HOSTILE_APP_ID, [{ name: 'a.csv', data: 'a' }], { signal })],
  ['getUploadUrls', (client, signal) => client.uploads.getUploadUrls(HOSTILE_APP_ID, ['a.csv'], { signal })],
  ['publishBatch', (client, signal) => client.finance.publishBatch(HOSTILE_APP_ID, financeRecords(1), { signal })],
  ['getToken', (client, signal) => client.tokens.getToken({ signal })],
];

describe('a token request whose only caller aborted', () => {
  it.each(calls)('is hung up on when %s is aborted, not left to its 60 s timeout', async (_, call) => {
    const { service, closed } = await silentTokenEndpoint();
    const refreshes: string[] = [];
    const client = service.client({
      timeoutMs: 60_000,
      hooks: { tokenRefresh: (event) => refreshes.push(event.reason) },
    });
    const failed = await call(client, AbortSignal.timeout(100)).catch((error: unknown) => error);
    const aborted = failed instanceof UploadStoppedError ? failed.cause : failed;
    expect(aborted).toBeInstanceOf(AbortError);
    expect(service.on('token')).toHaveLength(1);
    expect(await within(closed, 3_000)).toBe('hung up');
    // Given up on purpose: no refresh failure to report.
    expect(refreshes).toEqual([]);
  });

  it('keeps running while another caller still waits for it', async () => {
    const { service, closed } = await silentTokenEndpoint();
    const client = service.client({ timeoutMs: 60_000 });
    const waiting = new AbortController();
    const other = client.tokens.getToken({ signal: waiting.signal }).catch((error: unknown) => error);
    const failed = await client.uploads
      .upload(HOSTILE_APP_ID, [{ name: 'a.csv', data: 'a' }], { signal: AbortSignal.timeout(100) })
      .catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(UploadStoppedError);
    expect(await within(closed, 300)).toBe('still open');
    waiting.abort();
    expect(await other).toBeInstanceOf(AbortError);
    expect(await within(closed, 3_000)).toBe('hung up');
  });

  it('is hung up on even when a forced refresh took its place meanwhile', async () => {
    // The first token request (a plain refresh) never answers; the forced one that follows does.
    let plainClosed: () => void = () => {};
    const closed = new Promise<string>((resolve) => {
      plainClosed = () => resolve('hung up');
    });
    const service = await startService((request, res) => {
      if (request.route !== 'token' || request.hit !== 1) return false;
      res.on('close', () => {
        if (!res.writableEnded) plainClosed();
      });
      return true;
    });
    const client = service.client({ timeoutMs: 60_000 });
    const plain = new AbortController();
    const waiting = client.tokens.getToken({ signal: plain.signal }).catch((error: unknown) => error);
    await expect.poll(() => service.on('token').length).toBe(1);
    await client.tokens.getToken({ forceRefresh: true });
    plain.abort();
    expect(await waiting).toBeInstanceOf(AbortError);
    // Nobody waits for the plain refresh any more: it must not run on to its 60 s timeout.
    expect(await within(closed, 3_000)).toBe('hung up');
  });
});
