/**
 * An HTTP emulator holding many records and requests, in its own process so that its memory is
 * measured alone. The inspector's scale test drives a browser against it; run by hand, it prints
 * what filling it cost and exits:
 *
 *   node --expose-gc --import tsx bench/children/inspector-emulator.ts [--records 1000000] [--requests 10000] [--serve]
 *
 * Prints one JSON line: `{ url, inspectorUrl, records, requests, fillMs, rssBytes, heapUsedBytes }`,
 * measured after a forced GC when `--expose-gc` is given. With `--serve` it then keeps serving, and
 * prints a fresh `{ rssBytes, heapUsedBytes }` line for each line read on stdin; it exits when stdin
 * closes.
 */
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { MAX_RECORDS_PER_REQUEST, startEmulator } from '../../src/testing/index.js';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '1000000' },
    requests: { type: 'string', default: '10000' },
    serve: { type: 'boolean', default: false },
  },
});
const recordCount = Number(values.records);
const requestCount = Number(values.requests);

const VENDORS = ['Acme', 'Globex', 'Initech', 'Umbrella', 'Hooli', 'Stark Industries', 'Wayne Enterprises'];

function batch(first: number, count: number): string {
  const records = [];
  for (let i = first; i < first + count; i++) {
    records.push({
      created: 1_700_000_000_000 + i * 1000,
      amount: (i % 10_000) / 100,
      currency: 'EUR',
      identifier: `user${i % 50_000}@example.com`,
      type: i % 3 === 0 ? 'invoice' : 'expense',
      vendor: VENDORS[i % VENDORS.length],
      description: `Purchase number ${i}`,
      transactionNumber: `TX-${String(i).padStart(7, '0')}`,
    });
  }
  return JSON.stringify({ records });
}

function measure(): { rssBytes: number; heapUsedBytes: number } {
  globalThis.gc?.();
  const usage = process.memoryUsage();
  return { rssBytes: usage.rss, heapUsedBytes: usage.heapUsed };
}

const emulator = await startEmulator();
const { mock } = emulator;
const started = performance.now();
let requests = 0;
const token = await mock.handle(
  new Request(`${mock.authUrl}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: mock.clientId,
      client_secret: mock.clientSecret,
      scope: `${mock.scopeBase}/connector.write`,
    }),
  }),
);
requests += 1;
const { access_token: accessToken } = (await token.json()) as { access_token: string };
const financeUrl = `${mock.baseUrl}/services/push/v1/customer/apps/${mock.appId}/finance`;
// The records go in through the handler, as a client's requests would, without a socket each.
for (let first = 0; first < recordCount; first += MAX_RECORDS_PER_REQUEST) {
  const response = await mock.handle(
    new Request(financeUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` },
      body: batch(first, Math.min(MAX_RECORDS_PER_REQUEST, recordCount - first)),
    }),
  );
  requests += 1;
  if (response.status !== 200) throw new Error(`finance request answered ${response.status}: ${await response.text()}`);
}
// The rest of the requests: reads of unknown paths, which the log keeps like any other.
for (let i = 0; requests < requestCount; i++) {
  await mock.handle(new Request(`${mock.baseUrl}/services/push/v1/customer/apps/${mock.appId}/nothing-${i}`));
  requests += 1;
}
const fillMs = Math.round(performance.now() - started);

process.stdout.write(
  `${JSON.stringify({
    url: emulator.url,
    inspectorUrl: emulator.inspectorUrl,
    records: mock.state.recordCount(),
    requests: mock.state.requests.length,
    fillMs,
    ...measure(),
  })}\n`,
);

if (!values.serve) {
  await emulator.close();
} else {
  const lines = createInterface({ input: process.stdin });
  lines.on('line', () => process.stdout.write(`${JSON.stringify(measure())}\n`));
  lines.on('close', () => void emulator.close());
}
