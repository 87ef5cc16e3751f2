// TypeScript consumer with moduleResolution node10 (CommonJS output): every subpath's types
// resolve through `typesVersions`, and the compiled require() calls run.
import assert from 'node:assert/strict';
import { type FinanceRecordInput, PushClient } from 'push-api-client';
import { financeRecordSchema } from 'push-api-client/schema';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';

async function main(): Promise<void> {
  const emulator: RunningEmulator = await startEmulator();
  try {
    const { mock } = emulator;
    const client = new PushClient({
      clientId: mock.clientId,
      clientSecret: mock.clientSecret,
      authUrl: emulator.authUrl,
      baseUrl: emulator.baseUrl,
      scopeBase: mock.scopeBase,
    });
    const record: FinanceRecordInput = {
      created: '2025-01-31',
      amount: 1,
      currency: 'USD',
      identifier: 'ada@example.com',
      type: 'expense',
      vendor: 'Acme',
    };
    assert.equal(financeRecordSchema.safeParse(record).success, true);
    const report = await client.finance.publish(mock.appId, [record]);
    assert.equal(report.recordsSent, 1);
    console.log(`ts-node10: ok on node ${process.version}`);
  } finally {
    await emulator.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
