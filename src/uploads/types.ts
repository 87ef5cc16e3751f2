/** Public types of the uploader: what goes in, what comes out. */
import type { PushError, UploadError } from '../errors.js';
import type { RequestOptions } from '../http/public-types.js';

/** The `type` query parameter of the upload-address operation (spec, operation 2). */
export type UploadFileType = 'users' | 'contracts' | 'other';

/** A file on disk, streamed from disk (never read whole into memory). */
export interface UploadPathInput {
  /** The name the service stores the file under. @default the path's basename */
  name?: string | undefined;
  path: string;
}

/** Content already in memory. A string is sent as its UTF-8 bytes. */
export interface UploadDataInput {
  name: string;
  data: string | Uint8Array | Blob;
}

/**
 * Content from a stream that can be read only once, with its size declared up front (the PUT always
 * carries `Content-Length`). Such a file is never retried: a failed PUT is reported as failed.
 */
export interface UploadStreamInput {
  name: string;
  stream: NodeJS.ReadableStream | AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>;
  /** Exact number of bytes the stream yields; a stream that yields more or fewer fails that file. */
  size: number;
}

/** One file to upload: a path (name = basename), a path with a name, in-memory data, or a sized stream. */
export type UploadInput = string | UploadPathInput | UploadDataInput | UploadStreamInput;

/** Options of {@link Uploader.getUploadUrls}. */
export interface GetUploadUrlsOptions extends RequestOptions {
  /** Sent as the `type` query parameter. @default not sent */
  type?: UploadFileType | undefined;
  /** Aborts the request(s); `getUploadUrls` then rejects with `AbortError`. @default undefined (no abort) */
  signal?: AbortSignal | undefined;
}

/** Progress of an upload, reported as bytes are handed to the transport. Both totals only grow. */
export interface UploadProgress {
  /** Name of the file whose bytes moved. */
  file: string;
  /** Bytes of that file sent so far (a re-sent attempt counts again only past its previous mark). */
  fileBytes: number;
  /** Size of that file. */
  fileTotal: number;
  /** Bytes sent so far, over all files of the call. */
  bytes: number;
  /** Size of all files of the call. */
  totalBytes: number;
}

/** Options of {@link Uploader.upload}. */
export interface UploadOptions extends RequestOptions {
  /** Sent as the `type` query parameter when asking for upload addresses. @default not sent */
  type?: UploadFileType | undefined;
  /**
   * The most PUTs at once. For small files the window starts here (the storage host expects parallel
   * PUTs), for larger ones at as many leading files as fit in 512 MiB, or at 8 when fewer do; it shrinks when round trips inflate or on a 429 or 503, and grows
   * while they stay near their least value; see `adaptive`.
   * @default 64
   */
  concurrency?: number | undefined;
  /**
   * Find the window from the network (see `concurrency`). `false`: up to `concurrency` PUTs at once, no adaptive window.
   * @default true
   */
  adaptive?: boolean | undefined;
  /**
   * Called as bytes are sent and when a file completes. An exception thrown here (or a rejection
   * of the promise an async one returns) is logged as a warning and ignored.
   * @default undefined (no progress calls)
   */
  onProgress?: ((progress: UploadProgress) => void) | undefined;
  /**
   * Called once per file that settled (uploaded or failed), in completion order, before that
   * worker starts its next file; a returned promise is awaited. If it throws, no further file
   * starts, files in flight finish, and `upload` rejects with a `PushError` carrying `report`
   * (`cause` is the thrown error).
   * @default undefined (no calls)
   */
  onFileSettled?: ((file: UploadFileResult) => void | Promise<void>) | undefined;
  /**
   * Aborts every pending and running PUT; `upload` then rejects with an `AbortError` that carries
   * `report`. @default undefined (no abort)
   */
  signal?: AbortSignal | undefined;
  /**
   * Ends the run in order, as a scheduler's SIGTERM asks, without the wait of the retries: once it
   * fires, no further file starts; PUTs on the wire finish; a file waiting to be sent again (after
   * a 503, a lost connection, a refused signature) gives up with its last answer (`failed`). The
   * run then ends within one request timeout, rather than after a `Retry-After` of the storage
   * host's choosing. `upload` rejects with `UploadStoppedError` (its `cause` an `AbortError`) when
   * files were left `not-started`, and resolves when every file had started.
   * @default undefined (every file is uploaded)
   */
  stopSignal?: AbortSignal | undefined;
  /**
   * The run's patience with a storage host that pushes back and stores nothing. A file whose PUT is
   * answered 429 or 503 is re-sent up to `maxRetries` times after `Retry-After` (a stream input
   * once only), and then `failed`; the others go on. Counted from the first 429 or 503 since a file
   * was last uploaded, once this long has passed, the first file that fails with one stops the run
   * (`stoppedBy`, and `upload` rejects with `UploadStoppedError`, the files not yet started
   * `not-started`): an outage holds the run this long and at most one file's retries more, not
   * every file in turn with its retries and their waits.
   * @default 300000 (5 minutes)
   */
  rateLimitDeadlineMs?: number | undefined;
}

/** Outcome of one file. */
export interface UploadFileResult {
  name: string;
  /** Size of the file in bytes. */
  bytes: number;
  /** `not-started`: the run stopped (an error every file would meet, or the abort) before its turn. */
  status: 'uploaded' | 'failed' | 'not-started';
  /** The storage host's `ETag` response header, when it sent one. */
  etag?: string;
  /**
   * The storage host's request id (`x-request-id`) of the PUT that settled the file: the one that
   * stored it, or the error answer it failed with. Absent when the host sent none or never answered.
   * @default undefined
   */
  requestId?: string;
  /** Number of PUT attempts made (retries and a re-signed address included). */
  attempts: number;
  /**
   * Why the file failed, with the file's name: the storage host's status, `storageCode` and
   * `storageMessage` when it answered; otherwise `cause` is the transport's error (a
   * `ConnectionError`, a `TimeoutError`) or the caller's `AbortError`.
   */
  error?: UploadError;
}

/**
 * What {@link Uploader.upload} resolves with, and what the error that stopped it carries as
 * `report`: one entry per input file, in input order.
 */
export interface UploadReport {
  files: UploadFileResult[];
  filesUploaded: number;
  filesFailed: number;
  /** Files the run stopped before starting; always 0 when `upload` resolved. */
  filesNotStarted: number;
  /** Sum of the sizes of the uploaded files. */
  bytesUploaded: number;
  durationMs: number;
  /**
   * Set when the run stopped before every file started because of an error every further file
   * would meet (as `PublishReport.stoppedBy`): a failed address request, a refused connection or
   * token, a 401, 403 or 404. `upload` then rejects with an `UploadStoppedError` whose `report` is
   * this report and whose `cause` is this error, unless `onFileSettled` also threw, or you aborted
   * (the thrown error, then the abort, come first).
   */
  stoppedBy?: PushError;
}
