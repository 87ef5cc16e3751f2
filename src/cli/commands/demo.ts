import { Command } from 'commander';
import { type FinanceRecordInput, PushClient } from '../../index.js';
import { DEMO_APP_ID, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, DEMO_SCOPE_BASE } from '../../testing/options.js';
import { ExitCode } from '../exit-codes.js';
import type { CommonFlags } from '../options.js';
import { formatBytes, formatDuration, formatTable, Output } from '../output.js';

const DEMO_RECORDS = 2500;

/** Sample records made up on the spot, so the package ships no data files. */
function* sampleRecords(count: number): Generator<FinanceRecordInput> {
  const vendors = ['Acme Cloud', 'Globex SaaS', 'Initech Licences', 'Umbrella Hosting'];
  const start = Date.UTC(2024, 0, 1);
  for (let i = 0; i < count; i++) {
    yield {
      created: start + i * 60_000,
      amount: Math.round((10 + ((i * 37) % 990)) * 100) / 100,
      currency: 'USD',
      identifier: `user${i % 50}@example.com`,
      type: i % 3 === 0 ? 'invoice' : 'expense',
      vendor: vendors[i % vendors.length] as string,
      transactionNumber: `T-${String(i).padStart(6, '0')}`,
    };
  }
}

function sampleFiles(): { name: string; data: string }[] {
  const users = ['email,name', ...Array.from({ length: 20 }, (_, i) => `user${i}@example.com,User ${i}`)].join('\n');
  const contracts = ['vendor,start,end', 'Acme Cloud,2024-01-01,2024-12-31', 'Globex SaaS,2024-03-01,2025-02-28'].join(
    '\n',
  );
  return [
    { name: 'users.csv', data: `${users}\n` },
    { name: 'contracts.csv', data: `${contracts}\n` },
  ];
}

/** `push-api demo`: the embedded emulator on loopback, then token, upload and publish against it. */
export function demoCommand(): Command {
  return new Command('demo')
    .description('start the embedded emulator and run token, upload and publish on generated sample data')
    .option('--json', 'print one JSON report on stdout; human text goes to stderr')
    .option('--verbose', 'show stack traces')
    .action(async (flags: CommonFlags) => {
      const output = new Output({ json: flags.json === true, verbose: flags.verbose === true });
      // Loaded here, not at startup: other commands never pay for the HTTP server and the emulated service.
      const { startEmulator } = await import('../../testing/server.js');
      const emulator = await startEmulator({ port: 0 });
      try {
        output.result(`emulator listening on ${emulator.url}`);
        const client = new PushClient({
          clientId: DEMO_CLIENT_ID,
          clientSecret: DEMO_CLIENT_SECRET,
          authUrl: emulator.authUrl,
          baseUrl: emulator.baseUrl,
          scopeBase: DEMO_SCOPE_BASE,
          env: {},
        });
        const token = await client.tokens.getToken();
        output.result(
          `\n1. token\n${formatTable([
            ['type', token.tokenType],
            ['expires', token.expiresAt.toISOString()],
            ['scopes', token.scopes.join(' ')],
          ])}`,
        );
        const upload = await client.uploads.upload(DEMO_APP_ID, sampleFiles(), { type: 'other' });
        output.result(
          `\n2. upload\n${formatTable(upload.files.map((file) => [file.name, `${file.status} ${formatBytes(file.bytes)}`]))}`,
        );
        const publish = await client.finance.publish(DEMO_APP_ID, sampleRecords(DEMO_RECORDS), { batchSize: 1000 });
        output.result(
          `\n3. finance publish\n${formatTable([
            ['sent', publish.recordsSent],
            ['invalid', publish.recordsInvalid],
            ['failed', publish.recordsFailed],
            ['unknown', publish.recordsUnknown],
            ['batches', publish.batches.length],
            ['duration', formatDuration(publish.durationMs)],
          ])}`,
        );
        const stored = emulator.mock.state.recordCount(DEMO_APP_ID);
        output.result(`\nthe emulator now holds ${stored} records for ${DEMO_APP_ID}`);
        const ok = upload.filesFailed === 0 && publish.recordsSent === DEMO_RECORDS;
        output.report({
          ok,
          exitCode: ok ? ExitCode.Success : ExitCode.Stopped,
          command: 'demo',
          token: { tokenType: token.tokenType, expiresAt: token.expiresAt.toISOString(), scopes: token.scopes },
          upload: {
            filesUploaded: upload.filesUploaded,
            filesFailed: upload.filesFailed,
            bytesUploaded: upload.bytesUploaded,
          },
          publish: {
            recordsSent: publish.recordsSent,
            recordsFailed: publish.recordsFailed,
            recordsUnknown: publish.recordsUnknown,
          },
          recordsStored: stored,
        });
        process.exitCode = ok ? ExitCode.Success : ExitCode.Stopped;
      } finally {
        await emulator.close();
      }
    });
}
