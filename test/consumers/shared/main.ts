// TypeScript consumer, compiled once per project (moduleResolution node16 and bundler): the published
// types must type-check and the compiled output must run.
import assert from 'node:assert/strict';
import { basename, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type FinanceRecordInput,
  type PublishReport,
  PushApiError,
  PushClient,
  type PushClientOptions,
  type PushClientOverrides,
  TokenError,
  type UploadFileResult,
  type UploadInput,
} from 'push-api-client';
import { type FaultRule, type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { responses, stoppedCounts, tenant } from './responses.js';

// Options read from the environment are `T | undefined`: under `exactOptionalPropertyTypes` the
// options must say they take `undefined`, as the emulator does (it applies the default).
const port = process.env['PUSH_EMULATOR_PORT'] ? Number(process.env['PUSH_EMULATOR_PORT']) : undefined;
// A path upload whose stored name may be unset: the path's basename is the default.
const renamed: string | undefined = process.env['PUSH_UPLOAD_NAME'];
const fromDisk: UploadInput = { path: 'report.csv', name: renamed };
void fromDisk;
// A fault rule built from optional settings: an unset one is as if absent.
const retries: number | undefined = process.env['PUSH_FAULT_TIMES']
  ? Number(process.env['PUSH_FAULT_TIMES'])
  : undefined;
const flaky: FaultRule = { status: 503, times: retries, match: { method: undefined, operation: 'finance' } };
void flaky;
const emulator: RunningEmulator = await startEmulator({ port, host: undefined, tokenTtlSeconds: undefined });
try {
  const { mock } = emulator;
  const options: PushClientOptions = {
    clientId: mock.clientId,
    clientSecret: mock.clientSecret,
    authUrl: emulator.authUrl,
    baseUrl: emulator.baseUrl,
    scopeBase: mock.scopeBase,
  };
  const client = new PushClient(options);
  const token = await client.tokens.getToken();
  const expiresAt: Date = token.expiresAt;
  assert.ok(expiresAt.getTime() > Date.now());

  const upload = await client.uploads.upload(mock.appId, [{ name: 'users.csv', data: 'email\nada@example.com\n' }]);
  assert.equal(upload.filesUploaded, 1);

  const records: FinanceRecordInput[] = Array.from({ length: 1500 }, (_, i) => ({
    created: '2025-01-31',
    amount: i,
    currency: 'USD',
    identifier: `user${i}@example.com`,
    type: 'expense',
    vendor: 'Acme',
  }));
  // @ts-expect-error the types are real, not `any`: 'refund' is not a record type
  const wrong: FinanceRecordInput = { ...records[0], type: 'refund' };
  assert.ok(wrong);
  const report: PublishReport = await client.finance.publish(mock.appId, records);
  assert.equal(report.recordsSent, 1500);
  assert.equal(mock.state.recordCount(mock.appId), 1500);
  assert.equal(mock.state.tokenRequestCount, 1);
  // A page of the emulator's records asked for with settings that may be unset, as a test reads them.
  const search: string | undefined = process.env['PUSH_RECORD_SEARCH'];
  const page = mock.state.recordPage(mock.appId, { before: undefined, limit: undefined, search });
  assert.equal(page.records.length, 50);
  // Error classes built by a user's own fakes, from fields that may be unset.
  const requestId: string | undefined = process.env['PUSH_REQUEST_ID'];
  const refused = new TokenError('invalid_client', 'refused', { status: 401, requestId, retryAfterMs: undefined });
  assert.equal(refused.requestId, undefined);
  const rejected = new PushApiError(400, { code: 'INVALID', message: undefined, success: false }, {});
  assert.equal(rejected.status, 400);

  // A derived client with instant retries, on the same token: a 429 asking for 5 s costs nothing.
  const instant: PushClientOverrides = { backoff: { initialDelayMs: 0, maxDelayMs: 0 }, maxRetryAfterMs: 0 };
  const fast = client.withOptions(instant);
  mock.faults.add({ match: { operation: 'finance' }, status: 429, retryAfter: 5 });
  const started = Date.now();
  await fast.finance.publishBatch(mock.appId, [records[0] as FinanceRecordInput], { maxRetries: 1 });
  assert.ok(Date.now() - started < 2_000);
  assert.equal(mock.state.tokenRequestCount, 1);
  // A failed file's error is the UploadError the docs describe, storageCode included.
  const storageCode = (file: UploadFileResult): string | undefined => file.error?.storageCode;
  assert.equal(storageCode(upload.files[0] as UploadFileResult), undefined);
  // `.withResponse()`, `client.request` and middleware, as the docs show them.
  const seen = await responses(new PushClient({ ...options, middleware: [tenant] }), mock.appId);
  assert.equal(seen.batchStatus, 200);
  assert.equal(typeof seen.batchRequestId, 'string');
  assert.equal(seen.headerRequestId, seen.batchRequestId);
  assert.equal(seen.cachedTokenResponse, null);
  assert.equal(seen.addresses, 3);
  assert.equal(seen.rawStatus, 200);
  const stopped = await client.finance.publish('no-such-app', [records[0] as FinanceRecordInput]).catch(stoppedCounts);
  assert.match(String(stopped), /0 sent, 1 failed, 0 unknown/);
  // dist/main.js sits inside the project folder, whose name says which resolution was used.
  const project = basename(dirname(dirname(fileURLToPath(import.meta.url))));
  console.log(`${project}: ok on node ${process.version}`);
} finally {
  await emulator.close();
}
