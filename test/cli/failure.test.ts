/**
 * The one line the CLI prints for a stop names what went wrong and what to check, for the
 * mistakes of a first run: credentials, scope prefix, auth and data addresses, the app id. Errors
 * come from the emulator, in-process, as the SDK raises them.
 */
import { PublishStoppedError, type PushClientOptions, type PushError, UploadStoppedError } from 'push-api-client';
import { createPushApiHandler } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { describeStop } from '../../src/cli/failure.js';
import { clientFor } from '../support/clients.js';
import { financeRecord } from '../support/records.js';

const ORIGIN = 'https://push.example';
const mock = createPushApiHandler({ authUrl: `${ORIGIN}/auth`, baseUrl: ORIGIN, uploadUrl: `${ORIGIN}/storage` });
const endpoints = (options: PushClientOptions, appId = mock.appId) => ({
  authUrl: String(options.authUrl ?? mock.authUrl),
  baseUrl: String(options.baseUrl ?? mock.baseUrl),
  appId,
});

/** The error that stopped a one-record publish with these settings. */
async function stopOf(options: PushClientOptions, appId = mock.appId): Promise<PushError> {
  const error = await clientFor(mock, { maxRetries: 0, ...options })
    .finance.publish(appId, [financeRecord()])
    .catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(PublishStoppedError);
  return (error as PublishStoppedError).cause as PushError;
}

describe('describeStop', () => {
  it('a wrong secret: the token service refused the credentials, check the credential settings', async () => {
    const options = { clientSecret: 'typed-wrong-secret' };
    const line = describeStop(await stopOf(options), endpoints(options), 'publish');
    expect(line).toMatch(/^the token service at push\.example refused the credentials: .*\(invalid_client\)/);
    expect(line).toContain('check clientId and clientSecret (PUSH_CLIENT_ID, PUSH_CLIENT_SECRET)');
    expect(line).not.toContain('typed-wrong-secret');
  });

  it('an authUrl with no token endpoint is not called a refusal of the credentials', async () => {
    const options = { authUrl: ORIGIN };
    const line = describeStop(await stopOf(options), endpoints(options), 'publish');
    expect(line).not.toContain('refused the credentials');
    expect(line).toBe(
      `the token service at push.example answered: Token request failed with HTTP 404: no token endpoint at ${ORIGIN}/oauth2/token; check authUrl (PUSH_AUTH_URL): tokens are requested from {authUrl}/oauth2/token`,
    );
  });

  it('a scope prefix the credential lacks is not called a refusal of the credentials', async () => {
    const options = { scopeBase: 'https://api.other.example' };
    const line = describeStop(await stopOf(options), endpoints(options), 'publish');
    expect(line).toMatch(/^the token service at push\.example answered: .*\(invalid_scope\).*check scopeBase/);
  });

  it("an unknown app: the service's words, and what to check", async () => {
    const line = describeStop(await stopOf({}, 'no-such-app'), endpoints({}, 'no-such-app'), 'publish');
    expect(line).toBe(
      `the data API at push.example answered 404 for app "no-such-app" (404 Not Found: unknown app "no-such-app"): check --app, and --base-url if that is not the data API's address`,
    );
  });

  for (const [status, answer, what] of [
    [429, 'rate limited', 'a rate limit'],
    [503, 'unavailable', 'an outage (503)'],
  ] as const) {
    it(`${what} that outlasts the run's patience: says so, and that the rest can be sent later`, async () => {
      const fault = mock.faults.add({ match: { operation: 'finance' }, status, retryAfter: 0, times: 1 });
      const error = await clientFor(mock, { maxRetries: 0 })
        .finance.publish(mock.appId, [financeRecord(), financeRecord(1)], {
          batchSize: 1,
          concurrency: 1,
          rateLimitDeadlineMs: 0,
        })
        .catch((caught: unknown) => caught);
      fault.remove();
      expect(error).toBeInstanceOf(PublishStoppedError);
      const line = describeStop((error as PublishStoppedError).cause, endpoints({}), 'publish');
      expect(line).toMatch(
        new RegExp(
          `^the data API at push\\.example answered ${status} \\(${answer}\\) and accepted nothing for 5 minutes`,
        ),
      );
      expect(line).toContain('can be sent later');
      expect((error as PublishStoppedError).report.recordsNotRead).toBe(1);
    });
  }

  it("an upload stopped by 429s to its address request: not told as a publish's patience", async () => {
    const fault = mock.faults.add({ match: { operation: 'upload-urls' }, status: 429, retryAfter: 0, times: 10 });
    const error = await clientFor(mock, { maxRetries: 0 })
      .uploads.upload(mock.appId, [{ name: 'a.csv', data: 'a,b\n1,2\n' }])
      .catch((caught: unknown) => caught);
    fault.remove();
    expect(error).toBeInstanceOf(UploadStoppedError);
    const line = describeStop((error as UploadStoppedError).cause, endpoints({}), 'upload');
    expect(line).toMatch(
      /^the data API at push\.example answered 429 \(rate limited\) to a request for upload addresses/,
    );
    expect(line).not.toContain('minutes');
  });

  it('an upload stopped by a storage host that is down: says so, and that the rest can be uploaded later', async () => {
    const fault = mock.faults.add({ match: { operation: 'upload' }, status: 503, times: 1 });
    const error = await clientFor(mock, { maxRetries: 0 })
      .uploads.upload(
        mock.appId,
        [
          { name: 'a.csv', data: 'a\n' },
          { name: 'b.csv', data: 'b\n' },
        ],
        {
          concurrency: 1,
          adaptive: false,
          rateLimitDeadlineMs: 0,
        },
      )
      .catch((caught: unknown) => caught);
    fault.remove();
    expect(error).toBeInstanceOf(UploadStoppedError);
    const line = describeStop((error as UploadStoppedError).cause, endpoints({}), 'upload');
    expect(line).toMatch(/^the storage host answered 503 \(unavailable\) and stored no file for 5 minutes/);
    expect(line).toContain('can be uploaded later');
    expect((error as UploadStoppedError).report.filesNotStarted).toBe(1);
  });

  it('a baseUrl that is not the data API: the 404 says so, where "unknown app" would mislead', async () => {
    const options = { baseUrl: `${ORIGIN}/api` };
    const line = describeStop(await stopOf(options), endpoints(options), 'publish');
    expect(line).toMatch(
      /^the data API at push\.example answered 404 for app "demo-app" \(404 Not Found: no such path\)/,
    );
    expect(line).toContain('--base-url');
  });
});
