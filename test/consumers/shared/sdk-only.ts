// Type-checked without the DOM library: every public type of the SDK entry must resolve from Node's globals.
import {
  type AccessToken,
  type BatchReport,
  type FinanceRecordInput,
  type GetTokenOptions,
  type PublishOptions,
  type PublishReport,
  PushClient,
  type PushClientOptions,
  PushError,
  RecordValidationError,
  type TokenStore,
  type UploadInput,
  type UploadOptions,
  type UploadReport,
} from 'push-api-client';
import { type FinanceRecord, financeRecordSchema } from 'push-api-client/schema';

const options: PushClientOptions = { clientId: 'id', authUrl: 'https://auth.example', baseUrl: 'https://api.example' };
const store: TokenStore = {
  get: (): AccessToken | undefined => undefined,
  set: () => undefined,
};
const client = new PushClient({
  ...options,
  clientSecret: 'secret',
  scopeBase: 'https://api.example',
  tokenStore: store,
});
const record: FinanceRecordInput = {
  created: new Date(),
  amount: 1,
  currency: 'USD',
  identifier: 'ada@example.com',
  type: 'expense',
  vendor: 'Acme',
};
const publishOptions: PublishOptions = { batchSize: 500, onInvalid: 'skip' };
const files: UploadInput[] = [
  { name: 'a.csv', data: 'x' },
  { name: 'b.bin', data: new Uint8Array(1) },
];

export async function run(): Promise<[PublishReport, UploadReport, BatchReport | undefined]> {
  const wire: FinanceRecord = financeRecordSchema.parse(record);
  if (typeof wire.created !== 'number') throw new Error('created should be sent as Unix milliseconds');
  try {
    const report = await client.finance.publish('app', [record], publishOptions);
    return [report, await client.uploads.upload('app', files), report.batches[0]];
  } catch (error) {
    if (error instanceof RecordValidationError || error instanceof PushError) throw error;
    throw new Error('unexpected', { cause: error });
  }
}

/**
 * Under exactOptionalPropertyTypes, a value that may be undefined goes into any option as it is,
 * with no `...(signal && { signal })` dance: every option takes `undefined` for "not set".
 */
export function passedThrough(signal: AbortSignal | undefined, timeoutMs: number | undefined) {
  const clientOptions: PushClientOptions = { timeoutMs, logger: undefined, hooks: { request: undefined } };
  const publish: PublishOptions = { signal, timeoutMs, concurrency: undefined, headers: undefined };
  const upload: UploadOptions = { signal, type: undefined, onProgress: undefined };
  const token: GetTokenOptions = { signal, forceRefresh: undefined, scopes: undefined };
  return { clientOptions, publish, upload, token };
}
