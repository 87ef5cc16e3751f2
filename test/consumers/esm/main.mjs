// Plain ESM consumer: `import` from the installed tarball, token + upload + publish against the emulator.
import assert from 'node:assert/strict';
import { PushClient, RecordValidationError } from 'push-api-client';
import { financeRecordSchema } from 'push-api-client/schema';
import { startEmulator } from 'push-api-client/testing';

const emulator = await startEmulator();
try {
  const { mock } = emulator;
  const client = new PushClient({
    clientId: mock.clientId,
    clientSecret: mock.clientSecret,
    authUrl: emulator.authUrl,
    baseUrl: emulator.baseUrl,
    scopeBase: mock.scopeBase,
  });
  const token = await client.tokens.getToken();
  assert.equal(token.tokenType.toLowerCase(), 'bearer');

  const upload = await client.uploads.upload(mock.appId, [{ name: 'users.csv', data: 'email\nada@example.com\n' }]);
  assert.equal(upload.filesUploaded, 1);
  assert.equal(mock.state.file(mock.appId, 'users.csv')?.bytes.byteLength, 22);

  const records = Array.from({ length: 1500 }, (_, i) => ({
    created: Date.UTC(2025, 0, 1) + i * 60_000,
    amount: 10 + i,
    currency: 'USD',
    identifier: `user${i}@example.com`,
    type: 'expense',
    vendor: 'Acme',
  }));
  const report = await client.finance.publish(mock.appId, records);
  assert.equal(report.recordsSent, 1500);
  assert.equal(report.batches.length, 2);
  assert.equal(mock.state.recordCount(mock.appId), 1500);
  assert.equal(mock.state.tokenRequestCount, 1);

  await assert.rejects(client.finance.publish(mock.appId, [{ amount: 1 }]), RecordValidationError);
  assert.equal(financeRecordSchema.parse({ ...records[0], created: '2025-01-01' }).created, Date.UTC(2025, 0, 1));
  console.log(`esm: ok on node ${process.version}`);
} finally {
  await emulator.close();
}
