// The docs' `.withResponse()`, `client.request`, middleware and stopped-run `.report` examples, as a
// user writes them: no casts, under `strict`, `exactOptionalPropertyTypes` and TypeScript 7. Run
// by main.ts against the emulator; compiled without the DOM library by the sdk-only configuration.
import {
  type FinanceRecordInput,
  type Middleware,
  type PublishReport,
  PublishStoppedError,
  type PushClient,
  type RawRequestOptions,
  type ResponseMetadata,
  type UploadReport,
  UploadStoppedError,
  type WithResponse,
} from 'push-api-client';

const record: FinanceRecordInput = {
  created: '2025-01-31',
  amount: 12,
  currency: 'USD',
  identifier: 'ada@example.com',
  type: 'expense',
  vendor: 'Acme',
};

/** A tenant header on every request but the signed-address PUT. */
export const tenant: Middleware = async (request, next, { operation, attempt }) => {
  if (operation === 'upload') return next(request);
  const headers = new Headers(request.headers);
  headers.set('x-tenant', 'acme');
  headers.set('x-attempt', String(attempt));
  return next(new Request(request, { headers }));
};

export interface Seen {
  batchStatus: number;
  batchRequestId: string | undefined;
  headerRequestId: string | null;
  cachedTokenResponse: ResponseMetadata | null;
  addresses: number;
  rawStatus: number;
}

export async function responses(client: PushClient, appId: string): Promise<Seen> {
  const { data, response } = await client.finance.publishBatch(appId, [record]).withResponse();
  const success: true = data.success;
  await client.tokens.getToken();
  const token = await client.tokens.getToken().withResponse();
  const urls = await client.uploads.getUploadUrls(appId, ['users.csv'], { type: 'users' }).withResponse();
  const query: RawRequestOptions['query'] = { filenames: ['a.csv', 'b.csv'], type: undefined };
  const raw: WithResponse<Record<string, string>> = await client
    .request<Record<string, string>>({
      method: 'GET',
      path: `/services/push/v1/customer/apps/${appId}/upload`,
      query,
      scopes: undefined,
      timeoutMs: undefined,
    })
    .withResponse();
  return {
    batchStatus: success ? response.status : 0,
    batchRequestId: response.requestId,
    headerRequestId: response.headers.get('x-request-id'),
    cachedTokenResponse: token.response,
    addresses: Object.keys(urls.data).length + Object.keys(raw.data).length,
    rawStatus: raw.response.status,
  };
}

/** A stopped run's `.report` is that operation's report, read without casts. */
export function stoppedCounts(error: unknown): string {
  if (error instanceof PublishStoppedError) {
    const report: PublishReport = error.report;
    return `${report.recordsSent} sent, ${report.recordsFailed} failed, ${report.recordsUnknown} unknown`;
  }
  if (error instanceof UploadStoppedError) {
    const report: UploadReport = error.report;
    return `${report.filesUploaded} uploaded, ${report.filesFailed} failed`;
  }
  return 'not a stopped run';
}
