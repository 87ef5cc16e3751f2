/**
 * Quickstart: get a token, upload two files, publish 2,500 finance records, print the reports.
 *
 * With PUSH_CLIENT_ID, PUSH_CLIENT_SECRET, PUSH_AUTH_URL, PUSH_BASE_URL and PUSH_SCOPE_BASE set
 * (and PUSH_APP_ID), it talks to that service. Without any PUSH_* variable it starts the embedded
 * emulator on 127.0.0.1 and closes it at the end.
 *
 *   npm run demo
 */
import { pathToFileURL } from 'node:url';
import { type FinanceRecordInput, PushClient, type PushClientOptions } from 'push-api-client';
import { startEmulator } from 'push-api-client/testing';

function hasPushEnv(env: NodeJS.ProcessEnv): boolean {
  return Object.keys(env).some((name) => name.startsWith('PUSH_'));
}

function sampleRecords(count: number): FinanceRecordInput[] {
  const start = Date.UTC(2025, 0, 1);
  return Array.from({ length: count }, (_, i) => ({
    created: start + i * 60_000,
    amount: Math.round((10 + (i % 97) * 1.37) * 100) / 100,
    currency: 'USD',
    identifier: `user${i % 50}@example.com`,
    type: i % 5 === 0 ? 'invoice' : 'expense',
    vendor: ['Acme', 'Globex', 'Initech'][i % 3] ?? 'Acme',
    category: 'Software:SaaS',
  }));
}

export async function main(log: (line: string) => void = console.log): Promise<void> {
  const emulator = hasPushEnv(process.env) ? undefined : await startEmulator();
  try {
    // With no options, PushClient reads the PUSH_* environment variables.
    const options: PushClientOptions = emulator
      ? {
          clientId: emulator.mock.clientId,
          clientSecret: emulator.mock.clientSecret,
          authUrl: emulator.authUrl,
          baseUrl: emulator.baseUrl,
          scopeBase: emulator.mock.scopeBase,
        }
      : {};
    const appId = emulator ? emulator.mock.appId : (process.env.PUSH_APP_ID ?? '');
    if (emulator) log(`Using the embedded emulator at ${emulator.url}`);
    const client = new PushClient(options);

    // 1. A token (the client fetches and refreshes tokens by itself; this only shows it).
    const token = await client.tokens.getToken();
    log(`1. Token: ${token.tokenType}, expires ${token.expiresAt.toISOString()}, scopes ${token.scopes.join(' ')}`);

    // 2. Two files, through signed upload addresses.
    const uploads = await client.uploads.upload(appId, [
      { name: 'users.csv', data: 'email,name\nada@example.com,Ada\ngrace@example.com,Grace\n' },
      { name: 'contracts.csv', data: 'vendor,start,end\nAcme,2025-01-01,2025-12-31\n' },
    ]);
    log(`2. Upload: ${uploads.filesUploaded} uploaded, ${uploads.filesFailed} failed, ${uploads.bytesUploaded} bytes`);
    for (const file of uploads.files) log(`   ${file.name}: ${file.status} (${file.bytes} bytes)`);

    // 3. 2,500 finance records: sent in batches of at most 1,000.
    const report = await client.finance.publish(appId, sampleRecords(2_500));
    log(
      `3. Finance: ${report.recordsSent} sent, ${report.recordsInvalid} invalid, ` +
        `${report.recordsFailed} failed, ${report.recordsUnknown} unknown, in ${report.batches.length} batches`,
    );
    for (const batch of report.batches) {
      log(`   batch ${batch.index}: records ${batch.firstRecord}-${batch.lastRecord} ${batch.status}`);
    }
  } finally {
    await emulator?.close();
  }
}

// Run when executed directly (npm run demo), not when imported by the test.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
