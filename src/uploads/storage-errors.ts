/** Errors from the storage host behind the signed addresses (an S3/GCS-style XML error body). */
import { UploadError } from '../errors.js';
import { requestIdOf } from '../http/fetch.js';
import { truncateText } from '../internal/text.js';

/** `<Code>` and `<Message>` of an S3/GCS-style XML error body, when present. */
export interface StorageErrorDetails {
  code?: string;
  message?: string;
}

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function xmlText(raw: string): string {
  return raw.replace(/&(amp|lt|gt|quot|apos);/g, (_, entity: string) => XML_ENTITIES[entity] ?? '').trim();
}

/** Reads `<Code>` and `<Message>` from the tiny XML error document storage hosts return. */
export function parseStorageError(body: string): StorageErrorDetails {
  const code = /<Code>([^<]*)<\/Code>/.exec(body)?.[1];
  const message = /<Message>([^<]*)<\/Message>/.exec(body)?.[1];
  return {
    ...(code !== undefined && { code: xmlText(code) }),
    ...(message !== undefined && { message: xmlText(message) }),
  };
}

/** Builds the `UploadError` for a non-2xx PUT response (used as the transport's `mapError`). */
export function toUploadError(
  fileName: string,
  status: number,
  body: string,
  answer: { retryAfterMs?: number; requestId?: string } = {},
): UploadError {
  const parsed = parseStorageError(body);
  // The storage host's text is cut to a bounded length, like every server text copied into an error.
  const code = parsed.code === undefined ? undefined : truncateText(parsed.code);
  const message = parsed.message === undefined ? undefined : truncateText(parsed.message);
  const detail = [code, message].filter((part) => part !== undefined && part !== '').join(': ');
  return new UploadError(
    fileName,
    `Upload of ${JSON.stringify(fileName)} failed with HTTP ${status}${detail ? ` (${detail})` : ''}.`,
    {
      status,
      ...(code !== undefined && { storageCode: code }),
      ...(message !== undefined && { storageMessage: message }),
      ...(answer.retryAfterMs !== undefined && { retryAfterMs: answer.retryAfterMs }),
      ...(answer.requestId !== undefined && { requestId: answer.requestId }),
    },
  );
}

/** Codes S3 and GCS use when a signed address has expired or its signature is refused. */
const SIGNATURE_CODES = new Set([
  'AccessDenied',
  'SignatureDoesNotMatch',
  'ExpiredToken',
  'RequestExpired',
  'TokenRefreshRequired',
]);

/**
 * Whether a failed PUT is worth one retry with a freshly signed address: the storage host refused
 * the signature (S3 answers an expired address with 403 AccessDenied "Request has expired"; GCS
 * answers 400 ExpiredToken). Other 4xx are about the request itself and a new address cannot help.
 */
export function isRefusedSignature(error: unknown): boolean {
  if (!(error instanceof UploadError) || (error.status !== 403 && error.status !== 400)) return false;
  if (error.storageCode !== undefined && SIGNATURE_CODES.has(error.storageCode)) return true;
  return /expired/i.test(error.storageMessage ?? '');
}

/**
 * Gives every failure of a file the file's name, so that `UploadFileResult.error` is always an
 * `UploadError`: transport errors and the caller's abort are wrapped, keeping them as `cause`.
 */
export function asUploadError(fileName: string, error: unknown): UploadError {
  if (error instanceof UploadError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  const status = (error as { status?: unknown } | null)?.status;
  // The service answered the request that failed (a refused re-sign): its request id stays in view.
  const requestId = requestIdOf(error);
  return new UploadError(fileName, `Upload of ${JSON.stringify(fileName)} failed: ${reason}`, {
    cause: error,
    ...(typeof status === 'number' && { status }),
    ...(requestId !== undefined && { requestId }),
  });
}
