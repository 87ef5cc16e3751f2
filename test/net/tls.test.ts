/**
 * TLS on loopback: a self-signed certificate, and a server whose handshake cannot agree with the
 * client. Both fail before a byte of the request is written, so a finance batch is `failed`, never
 * `unknown`, and the run stops; the error names the cause; `allowInsecureHttp` weakens no check.
 */
import { ConnectionError, PublishStoppedError, PushClient } from 'push-api-client';
import { DEMO_APP_ID, type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { financeRecords } from '../support/records.js';
import { selfSignedCertificate, startTlsFront, type TestCertificate, type TlsFront } from '../support/tls.js';

let certificate: TestCertificate;
let emulator: RunningEmulator;
const fronts: TlsFront[] = [];

beforeAll(() => {
  certificate = selfSignedCertificate();
});
afterAll(() => certificate.remove());
beforeEach(async () => {
  emulator = await startEmulator({ port: 0 });
});
afterEach(async () => {
  for (const front of fronts.splice(0)) await front.close();
  await emulator.close();
});

async function front(options: Parameters<typeof startTlsFront>[1] = {}): Promise<TlsFront> {
  const started = await startTlsFront(Number(new URL(emulator.url).port), {
    key: certificate.key,
    cert: certificate.cert,
    ...options,
  });
  fronts.push(started);
  return started;
}

function client(authUrl: string, baseUrl: string, allowInsecureHttp = false): PushClient {
  return new PushClient({
    ...emulator.clientOptions(),
    authUrl,
    baseUrl,
    env: {},
    allowInsecureHttp,
    maxRetries: 1,
    backoff: { initialDelayMs: 1, maxDelayMs: 1 },
  });
}

describe('a self-signed certificate', () => {
  it.each([false, true])(
    'is refused before sending, named in words (allowInsecureHttp: %s changes nothing)',
    async (allowInsecureHttp) => {
      const tls = await front();
      const { authUrl } = emulator.clientOptions();
      const error = await client(authUrl.replace(emulator.url, tls.url), tls.url, allowInsecureHttp)
        .tokens.getToken()
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ConnectionError);
      expect(error).toMatchObject({ requestMaybeSent: false });
      // Node's words, which Node 24 follows with a hint of its own (`--use-system-ca`).
      expect((error as Error).message).toMatch(
        /^token request failed: DEPTH_ZERO_SELF_SIGNED_CERT \(self-signed certificate(?:; [^)]+)?\)$/,
      );
      expect(emulator.mock.state.requests).toHaveLength(0);
    },
  );
});

describe('a data API whose TLS handshake cannot agree (it speaks TLS 1.1 at most)', () => {
  it('fails the batch before sending, never unknown, and stops the run', async () => {
    const tls = await front({ maxVersion: 'TLSv1.1', minVersion: 'TLSv1', ciphers: 'DEFAULT@SECLEVEL=0' });
    // The token comes over plain http from the same emulator; only the data API is behind TLS.
    const error = await client(emulator.clientOptions().authUrl, tls.url)
      .finance.publish(DEMO_APP_ID, financeRecords(3), { batchSize: 1, concurrency: 1 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PublishStoppedError);
    const { report, cause } = error as PublishStoppedError;
    expect(cause).toBeInstanceOf(ConnectionError);
    expect(cause).toMatchObject({ requestMaybeSent: false });
    expect((cause as Error).message).toMatch(/^finance request failed: ERR_SSL_\w+$/);
    expect(report).toMatchObject({ recordsFailed: 1, recordsUnknown: 0, recordsNotRead: 2 });
    expect(emulator.mock.state.records(DEMO_APP_ID)).toHaveLength(0);
  });
});
