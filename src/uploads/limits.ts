/** Limits and defaults of the uploader, in one place. */

/** Largest file accepted: the single-PUT limit of common object stores (S3, GCS, Azure block blobs). */
export const MAX_UPLOAD_BYTES = 5 * 1024 ** 3;

/** Proxies and gateways commonly reject request lines over 8 KB; each upload-address URL stays below this. */
export const MAX_UPLOAD_URLS_URL_LENGTH = 8_000;

/**
 * Bytes of files per upload-address request, past which the next file starts a new batch: the
 * addresses of a batch must still be fresh when its last file is sent, and signed addresses
 * commonly live 15 minutes (512 MiB then needs about 0.6 MB/s). A file larger than this gets a
 * batch of its own.
 */
export const ADDRESS_BATCH_BYTES = 512 * 1024 * 1024;

/**
 * The largest storage answer to a PUT that is read: nothing in it is used (the ETag and request
 * id are headers), and storage hosts answer a PUT with an empty or tiny body. A longer one fails
 * the file with a `ResponseTooLargeError` and drops its connection, instead of being read whole.
 */
export const MAX_PUT_RESPONSE_BYTES = 64 * 1024;

/** The most PUTs in flight at once: the bound of the adaptive window, high enough not to be the limit on an ordinary link. */
export const DEFAULT_UPLOAD_CONCURRENCY = 64;

/**
 * How long an upload run goes on while the storage host pushes back (429, 503) and no file is
 * uploaded: 5 minutes, a publish's `rateLimitDeadlineMs` too.
 */
export const DEFAULT_UPLOAD_RATE_LIMIT_DEADLINE_MS = 300_000;

/** Slice size used when streaming in-memory data, so progress advances in steps rather than all at once. */
export const MEMORY_CHUNK_BYTES = 64 * 1024;

/**
 * Read size for files on disk. Each chunk costs fetch a fixed amount of work (a few promises and
 * async generator steps in undici) and a new buffer, so 1 MiB reads cost less CPU per byte than
 * 256 KiB ones; memory stays flat either way: a body reads one chunk ahead of the transport.
 */
export const FILE_CHUNK_BYTES = 1024 * 1024;
