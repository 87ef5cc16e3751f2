/**
 * A reset (or `POST /_emulator/reset`) while requests are still on their way: what they bring must
 * not land in the state the reset started. A test suite that resets in `afterEach` would otherwise
 * find the previous test's late request, record, file or token in the next test.
 */
import { request as httpRequest } from 'node:http';
import { createPushApiHandler, startEmulator } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { financeRequest, getToken, signedUrls, tokenRequest } from '../support/emulator-requests.js';
import { financeRecord } from '../support/records.js';

/** Sends a PUT of `body` in two halves, calling `between` after the first half reached the emulator. */
function putInHalves(url: string, body: Buffer, between: () => void | Promise<void>): Promise<number> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: 'PUT',
        path: `${target.pathname}${target.search}`,
        headers: { 'content-length': String(body.byteLength) },
        timeout: 5000,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('timeout', () => req.destroy(new Error('PUT timed out')));
    req.on('error', reject);
    const half = Math.floor(body.byteLength / 2);
    req.write(body.subarray(0, half), () => {
      // Let the emulator read the first half before the reset.
      setTimeout(() => {
        void Promise.resolve(between()).then(() => req.end(body.subarray(half)), reject);
      }, 50);
    });
  });
}

describe('a reset racing requests in flight', () => {
  it('keeps a finance batch whose body was still arriving at reset() out of the new state and its log', async () => {
    const emulator = createPushApiHandler();
    const token = await getToken(emulator);
    const text = new TextEncoder().encode(JSON.stringify({ records: [financeRecord(0)] }));
    let send: ReadableStreamDefaultController<Uint8Array> | undefined;
    const raw = new ReadableStream<Uint8Array>({
      start(controller) {
        send = controller;
        controller.enqueue(text.subarray(0, 10));
      },
    });
    const late = emulator.handle(financeRequest(emulator, token, undefined, { raw }));
    await new Promise((resolve) => setTimeout(resolve, 20));
    emulator.reset();
    send?.enqueue(text.subarray(10));
    send?.close();
    expect((await late).status).toBe(200);
    expect(emulator.state.recordCount(emulator.appId)).toBe(0);
    expect(emulator.state.requests).toEqual([]);
  });

  it('leaves no log entry of a request delayed by a fault across reset()', async () => {
    const emulator = createPushApiHandler();
    emulator.faults.add({ delayMs: 50 });
    const late = emulator.handle(new Request(`${emulator.baseUrl}/no/such/path`));
    emulator.reset();
    expect((await late).status).toBe(404);
    expect(emulator.state.requests).toEqual([]);
  });

  it('keeps a token issued for a request in flight at reset() out of the new state', async () => {
    const emulator = createPushApiHandler();
    emulator.faults.add({ match: { operation: 'token' }, delayMs: 50 });
    const late = emulator.handle(
      tokenRequest(emulator, {
        grant_type: 'client_credentials',
        client_id: emulator.clientId,
        client_secret: emulator.clientSecret,
        scope: `${emulator.scopeBase}/connector.write`,
      }),
    );
    emulator.reset();
    expect((await late).status).toBe(200);
    expect(emulator.state.tokens).toEqual([]);
    expect(emulator.state.tokenRequestCount).toBe(0);
  });

  it('stores no file for a PUT whose body was still arriving at POST /_emulator/reset', async () => {
    const emulator = await startEmulator({ maxStoredUploadBytes: 1024 * 1024 });
    try {
      const token = await getToken(emulator.mock);
      const [url] = Object.values(await signedUrls(emulator.mock, token, ['users.csv']));
      const body = Buffer.alloc(64 * 1024, 7);
      const status = await putInHalves(url as string, body, async () => {
        const reset = await fetch(`${emulator.url}/_emulator/reset`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        });
        expect(reset.status).toBe(200);
      });
      // The address was issued before the reset; what matters is that nothing was stored.
      expect([200, 403]).toContain(status);
      expect(emulator.mock.state.files(emulator.mock.appId)).toEqual([]);
      expect(emulator.mock.state.requests).toEqual([]);
      // The bytes the PUT reserved before the reset are not charged to the new state.
      expect(emulator.mock.state.uploadStorage).toMatchObject({ storedBytes: 0, filesWithoutBytes: 0 });
    } finally {
      await emulator.close();
    }
  });
});
