/** Public API of push-api-client. Internal helpers are deliberately not exported. */

export type {
  AccessToken,
  ClientSecretSource,
  GetTokenOptions,
  MemoryTokenStoreOptions,
  TokenAuthMethod,
  TokenManager,
  TokenStore,
} from './auth/token-manager.js';
export { MemoryTokenStore } from './auth/token-manager.js';
export type { PushClientOptions } from './client.js';
export { PushClient } from './client.js';
export type { PushClientOverrides } from './client-overrides.js';
export type { ApiErrorBody, HeadersRecord, InvalidRecord, RecordIssue } from './errors.js';
export {
  AbortError,
  AuthenticationError,
  BadRequestError,
  ConfigurationError,
  ConnectionError,
  MAX_RETRY_AFTER_MS,
  NotFoundError,
  PermissionDeniedError,
  PublishStoppedError,
  PushApiError,
  PushError,
  parseRetryAfterHeader,
  RateLimitError,
  RecordValidationError,
  RedirectError,
  ResponseTooLargeError,
  ServerError,
  TimeoutError,
  TokenError,
  UnexpectedResponseError,
  UnprocessableEntityError,
  UploadError,
  UploadStoppedError,
} from './errors.js';
export type { FinanceRecordCheck } from './finance/check-record.js';
export { checkFinanceRecord } from './finance/check-record.js';
export type { FinanceRecord, FinanceRecordField, FinanceRecordInput } from './finance/fields.js';
// The zod schema itself is exported by `push-api-client/schema`, so that this entry does not load zod.
export { financeRecordFields } from './finance/fields.js';
export type { FinancePublisher } from './finance/publisher.js';
export type { RateBudget } from './finance/rate-budget.js';
export type {
  BatchReport,
  BatchStatus,
  PublishBatchOptions,
  PublishOptions,
  PublishProgress,
  PublishReport,
  SendingBatch,
  SettledBatch,
} from './finance/types.js';
export type { Middleware, MiddlewareContext, MiddlewareOperation } from './http/attempt.js';
export type { ResponsePromise } from './http/http-client.js';
export type {
  ConcurrencyHookEvent,
  FetchLike,
  HookRequestInfo,
  Logger,
  LogLevel,
  PushClientHooks,
  RequestHookEvent,
  RequestOptions,
  ResponseHookEvent,
  ResponseMetadata,
  RetryBackoff,
  RetryHookEvent,
  TokenRefreshHookEvent,
  WithResponse,
} from './http/public-types.js';
export type { QueryValue, RawRequestMethod, RawRequestOptions } from './raw-request.js';
export type {
  GetUploadUrlsOptions,
  UploadDataInput,
  UploadFileResult,
  UploadFileType,
  UploadInput,
  UploadOptions,
  UploadPathInput,
  UploadProgress,
  UploadReport,
  UploadStreamInput,
} from './uploads/types.js';
export type { Uploader } from './uploads/uploader.js';
export { VERSION } from './version.js';
