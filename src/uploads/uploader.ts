/**
 * The two-step upload (spec, operations 2 and 3): ask the data API for signed addresses, then PUT
 * each file's raw bytes to its address, a few at a time, with progress and a per-file report.
 * In this order:
 * - the uploader (`Uploader`): `getUploadUrls`, and `upload` as a run over the files, with a fresh
 *   address as a recovery step and the report;
 * - progress: per-attempt byte counts feeding one monotonic total (`ProgressTracker`);
 * - the address book: addresses asked for in requests as full as one URL allows, ahead of the
 *   workers (`AddressBook`);
 * - the address requests: file names checked before any request, requests split to fit one URL,
 *   each answer checked address by address;
 * - the inputs: each `UploadInput` as a name, a size and a way to open its bytes (`toUploadSource`).
 */

import type { ClientContext } from '../context.js';
import {
  AbortError,
  answeredBy,
  ConfigurationError,
  PushError,
  parseRetryAfterHeader,
  requestIdFrom,
  UploadError,
  UploadStoppedError,
} from '../errors.js';
import { answerText, assertSecureUrl, closerThanService, requestIdOf } from '../http/fetch.js';
import {
  appResourceUrl,
  type CallSettings,
  callSettings,
  limitsOnly,
  ResponsePromise,
  responseMetadataOf,
} from '../http/http-client.js';
import type { Logger, ResponseMetadata, WithResponse } from '../http/public-types.js';
import { isPushBack } from '../http/retry.js';
import type { RecoveryStep } from '../http/types.js';
import { ignoreRejection } from '../internal/logger.js';
import { fileNameProblem, truncateText } from '../internal/text.js';
import { abortErrorFrom, eitherSignal, nextTurn, onAbort } from '../internal/waits.js';
import {
  ConcurrencyLimiter,
  checkPatienceOption,
  type Departure,
  INITIAL_WINDOW,
  PushBackPatience,
  RunEngine,
  stopsTheRun,
} from '../run/engine.js';
import { fileUploadSource } from './file-source.js';
import {
  ADDRESS_BATCH_BYTES,
  DEFAULT_UPLOAD_CONCURRENCY,
  DEFAULT_UPLOAD_RATE_LIMIT_DEADLINE_MS,
  MAX_PUT_RESPONSE_BYTES,
  MAX_UPLOAD_URLS_URL_LENGTH,
  MEMORY_CHUNK_BYTES,
} from './limits.js';
import {
  assertUploadableSize,
  BodyMeter,
  bodyStream,
  type ChunkReader,
  putSetsContentLength,
  readEmptySource,
  sizedBody,
  type UploadSource,
} from './put-body.js';
import { asUploadError, isRefusedSignature, toUploadError } from './storage-errors.js';
import type {
  GetUploadUrlsOptions,
  UploadFileResult,
  UploadFileType,
  UploadInput,
  UploadOptions,
  UploadProgress,
  UploadReport,
  UploadStreamInput,
} from './types.js';

// ── The uploader ─────────────────────────────────────────────────────────────────────────────────
// `client.uploads`: the address request alone, and the whole upload as one run over the files.

/**
 * File uploads (spec, operations 2 and 3), reached as `client.uploads`. The bytes go straight to
 * the storage host through signed addresses, never through the data API, and the bearer token is
 * never sent there. Most callers want {@link Uploader.upload}, which does both steps.
 */
export class Uploader {
  readonly #ctx: ClientContext;

  constructor(ctx: ClientContext) {
    this.#ctx = ctx;
  }

  /**
   * Asks for one signed upload address per file name. Long lists are split over several requests,
   * each URL under 8 KB. The answer must hold exactly one absolute, https (or loopback) address per
   * name; anything else is an error, so that no file can be sent somewhere unexpected. Use it to
   * PUT the files yourself (from another process, say); the addresses expire, so use them soon.
   *
   * @example
   * ```ts
   * const urls = await client.uploads.getUploadUrls(appId, ['users.csv'], { type: 'users' });
   * const body = 'email\nada@example.com\n';
   * // The signed address carries its own authorization; Content-Length is set by fetch for a string.
   * await fetch(urls['users.csv'] ?? '', { method: 'PUT', body });
   * ```
   */
  getUploadUrls(
    appId: string,
    filenames: readonly string[],
    options: GetUploadUrlsOptions = {},
  ): ResponsePromise<Record<string, string>, ResponseMetadata | null> {
    return new ResponsePromise(this.#getUploadUrls(appId, filenames, options));
  }

  /**
   * The addresses, with the answer of the last request (there are more than one only for names too
   * many for one URL), or `null` when no name was asked for and nothing was sent.
   */
  async #getUploadUrls(
    appId: string,
    filenames: readonly string[],
    options: GetUploadUrlsOptions,
  ): Promise<WithResponse<Record<string, string>, ResponseMetadata | null>> {
    const endpoint = uploadUrlsEndpoint(this.#ctx.baseUrl, appId);
    if (!Array.isArray(filenames)) throw new ConfigurationError('filenames must be an array of file names');
    assertValidFileNames(filenames);
    const call = callSettings(options, this.#ctx.defaultHeaders);
    const addresses: Record<string, string> = {};
    let last: ResponseMetadata | undefined;
    for (const url of uploadUrlsRequests(endpoint, filenames, options.type)) {
      const names = url.searchParams.getAll('filenames');
      const response = await this.#ctx.http.send({
        operation: 'upload-urls',
        method: 'GET',
        url,
        // The spec lists this header for operation 2 even though the GET has no body.
        headers: { 'content-type': 'application/json' },
        auth: 'bearer',
        retryPolicy: 'idempotent',
        call,
      });
      last = responseMetadataOf(response);
      const answered = (error: PushError) => answeredBy(error, requestIdFrom(response.headers));
      let body: unknown;
      try {
        body = JSON.parse(await answerText(response));
      } catch (error) {
        throw answered(new PushError('The upload-address response is not valid JSON.', { cause: error }));
      }
      let granted: Record<string, string>;
      try {
        granted = parseUploadUrlMap(body, names, {
          allowInsecureHttp: this.#ctx.allowInsecureHttp,
          service: this.#ctx.baseUrl,
        });
      } catch (error) {
        throw error instanceof PushError ? answered(error) : error;
      }
      for (const [name, address] of Object.entries(granted)) {
        // defineProperty: a file may be called "__proto__".
        Object.defineProperty(addresses, name, {
          value: address,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
    }
    return { data: addresses, response: last ?? null };
  }

  /**
   * Uploads files: checks every input first (names, sizes, readable paths), then PUTs up to
   * `concurrency` at once. Signed addresses are asked for in batches, each as many names as fit in
   * one request URL (8 KB) and at most 512 MiB of files, so that a call whose names all fit makes
   * one address request; the next batch is asked for while the last files of the current one are
   * sent. One file's failure does not stop the others; each is reported, and `onFileSettled`
   * sees each as it settles. When the storage host refuses an address (it expired while the file
   * waited its turn), a file that can be read again gets a fresh address and one more try.
   *
   * A run that gave every file a final status (uploaded or failed) resolves with the report. A
   * stopped run rejects with an `UploadStoppedError`, whose `report` lists every file (those not
   * started are `not-started`; files in flight finish first) and whose `cause` is what stopped it.
   * @throws {UploadStoppedError} the run stopped. `cause`, in this order: what `onFileSettled`
   *   threw; the `AbortError` of the signal; an error every file would meet (a failed address
   *   request, a refused connection or token, a 401, 403 or 404).
   * @throws {ConfigurationError} bad options or appId, before any request.
   * @throws {UploadError} a bad input, before any request: a file name (empty, a path separator, a
   *   duplicate...), a path that cannot be read, a stream without its size.
   * @throws {AbortError} the signal had fired before the call: nothing was started.
   *
   * @example
   * ```ts
   * const report = await client.uploads.upload(
   *   appId,
   *   [
   *     './exports/users.csv', // streamed from disk, stored as "users.csv"
   *     { path: './exports/2025-03.csv', name: 'contracts.csv' },
   *     { name: 'notes.txt', data: 'generated in memory' },
   *   ],
   *   {
   *     concurrency: 2,
   *     onProgress: ({ bytes, totalBytes }) => console.log(`${Math.round((100 * bytes) / totalBytes)}%`),
   *     onFileSettled: (file) => console.log(file.name, file.status),
   *   },
   * );
   * for (const file of report.files) {
   *   if (file.status === 'failed') console.error(file.name, file.error?.message);
   * }
   * ```
   */
  async upload(appId: string, files: readonly UploadInput[], options: UploadOptions = {}): Promise<UploadReport> {
    const started = performance.now();
    const { signal } = options;
    const concurrency = options.concurrency ?? DEFAULT_UPLOAD_CONCURRENCY;
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new ConfigurationError(`concurrency must be a whole number of at least 1, got ${concurrency}`);
    }
    if (options.adaptive !== undefined && typeof options.adaptive !== 'boolean') {
      throw new ConfigurationError('adaptive must be true or false');
    }
    checkPatienceOption(options.rateLimitDeadlineMs);
    const endpoint = uploadUrlsEndpoint(this.#ctx.baseUrl, appId);
    const call = callSettings(options, this.#ctx.defaultHeaders); // bad per-call options fail before any file is opened
    if (!Array.isArray(files)) throw new ConfigurationError('files must be an array of upload inputs');
    throwIfAborted(signal);

    const sources = await uploadSources(files);
    // The caller's headers are for the service, never for the storage host; the limits and the signal apply to both.
    const putCall = limitsOnly(call);
    const results: (UploadFileResult | undefined)[] = new Array(sources.length);
    const bound = Math.max(1, Math.min(concurrency, sources.length));
    // Small files start at the bound: their PUTs go to the storage host behind the signed
    // addresses, which expects a client's parallel PUTs, and a round trip is most of each PUT's
    // time, so the rounds of slow start would be most of the call's. "Small": the first window's
    // files fit in one address batch, so the service gets one address request for them, not one
    // per large file. Large files start at the limiter's default: a round trip is little beside
    // their transfer, and a first round sent whole over a shared uplink would be the window's
    // reference for a no-load round trip. Unlike a publish, the first round is not narrowed to what
    // a slow uplink carries: a PUT that runs out of time there is sent again (addresses are
    // idempotent), never left `unknown`, and narrowing it would cost every fast link its slow start.
    const timeoutMs = call.timeoutMs ?? this.#ctx.timeoutMs;
    // The leading files that fit in one address batch, counted up to the bound rather than judged by
    // the whole first window: judged whole, a higher bound would make the same files "large" (64
    // files of 10 MiB do not fit in 512 MiB where 32 did) and start them lower than a lower bound did.
    const initial = smallFilesAtStart(sources, bound);
    const window = new ConcurrencyLimiter({
      max: bound,
      adaptive: options.adaptive !== false,
      ...(initial !== undefined && { initial }),
      // A PUT's timeout measures a stall of its body, but a body the system's buffers take whole
      // (most files) is seen to stall at once: its answer must come within the timeout, as a batch's does.
      answerWithinMs: timeoutMs,
      operation: 'upload',
      onChange: this.#ctx.hooks.concurrency,
    });
    // The address requests belong to the run: a stop gives up those on their way (a file waiting
    // for one does not start), and so does the end of the call (one asked for ahead that no file
    // needs), so that none outlives the call; the caller's abort reaches them too.
    const addressesWanted = new AbortController();
    const stopListening = signal === undefined ? () => {} : onAbort(signal, () => addressesWanted.abort(signal.reason));
    // Addresses are asked for ahead of as many files as the window may ever hold.
    const addressOptions: GetUploadUrlsOptions = { ...options, signal: addressesWanted.signal };
    const addresses = new AddressBook(sources, (names) => this.getUploadUrls(appId, names, addressOptions), {
      workers: window.max,
      endpoint,
      type: options.type,
    });
    const totalBytes = sources.reduce((sum, source) => sum + source.size, 0);
    const tracker = new ProgressTracker(totalBytes, options.onProgress, this.#ctx.logger);
    // A file waiting to be sent again (a backoff, a Retry-After, a fresh address) when the run
    // stops gives up with its last answer: nothing is sent after the stop, and no wait holds it.
    const runStopped = new AbortController();
    const patience = new PushBackPatience(options.rateLimitDeadlineMs ?? DEFAULT_UPLOAD_RATE_LIMIT_DEADLINE_MS);
    const engine = new RunEngine(signal, undefined, () => {
      runStopped.abort();
      addressesWanted.abort();
    });
    const { stopSignal } = options;
    const stopRequested = stopSignal === undefined ? () => {} : onAbort(stopSignal, () => engine.halt());

    await engine
      .run(sources.keys(), window, async (index) => {
        const source = sources[index] as UploadSource;
        let address: string;
        try {
          address = await addresses.get(index);
        } catch (error) {
          // The caller's abort is read from the signal, and a stop gave the request up; any other
          // failure stops the run.
          if (!(error instanceof AbortError)) {
            engine.stopBy(error instanceof PushError ? error : asUploadError(source.name, error));
          }
          return;
        }
        // The run stopped (or was aborted) while this file waited for its address: it does not start,
        // as publish does not send a batch it read before the stop.
        if (engine.shouldStop()) return;
        patience.itemStarted();
        const outcome = await this.#uploadOne(appId, source, address, tracker, putCall, window, {
          stopped: runStopped.signal,
          addressOptions,
          patience,
        }).finally(() => patience.itemSettled());
        // The run stopped while the file's empty source was being read: it was not sent, so it did not start.
        if (!outcome) return;
        results[index] = outcome.result;
        // The run's cause is the error itself (a ConnectionError, a NotFoundError of a re-sign), as
        // in publish; the file's own entry keeps it wrapped in its UploadError.
        if (outcome.stopsTheRun !== undefined) engine.stopBy(outcome.stopsTheRun);
        try {
          await options.onFileSettled?.(outcome.result);
        } catch (error) {
          engine.interrupt(error);
        }
        // The connection of this PUT goes back to the pool before this worker's next PUT is sent.
        await nextTurn();
      })
      .finally(() => {
        stopListening();
        stopRequested();
        addressesWanted.abort();
        // A caller's stream whose file did not start is closed, as publish closes its input.
        sources.forEach((source, index) => {
          if (results[index] === undefined) source.discard?.();
        });
      });

    const report = buildReport(sources, results, started, engine.stoppedBy);
    // A stop the caller asked for is the outcome only when it left files not started.
    const cause =
      engine.stopCause(abortErrorFrom) ??
      (stopSignal?.aborted && results.includes(undefined) ? abortErrorFrom(stopSignal) : undefined);
    if (cause !== undefined) throw new UploadStoppedError(report, cause);
    return report;
  }

  /**
   * One file: one request to the transport, which re-sends it when the source can be re-opened,
   * and fetches a fresh address once when the storage host refuses the signature (a recovery step).
   */
  async #uploadOne(
    appId: string,
    source: UploadSource,
    address: string,
    tracker: ProgressTracker,
    call: CallSettings,
    window: ConcurrencyLimiter,
    run: { stopped: AbortSignal; addressOptions: GetUploadUrlsOptions; patience: PushBackPatience },
  ): Promise<{ result: UploadFileResult; stopsTheRun?: PushError } | undefined> {
    const { name, size } = source;
    let attempts = 0;
    // When the last attempt left: its round trip is what feeds the window.
    let sentAt = 0;
    // The first attempt's departure, on the wire until the file settles.
    let departure: Departure | undefined;
    // Whether the last attempt likely opened a connection of its own (only a first attempt can).
    let newConnection = false;
    let meter: BodyMeter | undefined;
    const meters: BodyMeter[] = [];
    const failed = (error: UploadError) => {
      const requestId = requestIdOf(error);
      return {
        result: {
          name,
          bytes: size,
          status: 'failed',
          attempts,
          error,
          ...(requestId !== undefined && { requestId }),
        } satisfies UploadFileResult,
      };
    };
    // The address expired (or was refused) before the PUT: one fresh address, one more try.
    const resign: RecoveryStep = {
      name: 'fetching a fresh upload address',
      when: isRefusedSignature,
      // Like every address request of the call, given up at its stop.
      next: async () => ({
        url: new URL((await this.getUploadUrls(appId, [name], run.addressOptions))[name] ?? ''),
      }),
    };

    try {
      if (call.signal?.aborted) return failed(asUploadError(name, abortErrorFrom(call.signal)));
      let url: URL;
      try {
        url = new URL(address);
      } catch (error) {
        return failed(asUploadError(name, error));
      }
      if (size === 0) {
        const empty = new BodyMeter(name, 0);
        meters.push(empty);
        // A stop ends the read too, and the file is not sent: as a batch read before a stop is not
        // sent, nothing is sent after it, and a source slow to end does not hold the stop.
        const reading = eitherSignal(call.signal, run.stopped);
        const refused = await readEmptySource(
          source,
          empty,
          call.timeoutMs ?? this.#ctx.timeoutMs,
          reading.signal,
        ).finally(reading.release);
        if (run.stopped.aborted && !call.signal?.aborted) return undefined;
        if (refused instanceof AbortError) return failed(asUploadError(name, refused));
        if (refused !== undefined) return failed(refused);
      }
      const result = await this.#ctx.http.exchange({
        operation: 'upload',
        method: 'PUT',
        url,
        // The address came from the service's answer: neither it nor a redirect of it goes closer than the service.
        service: this.#ctx.baseUrl,
        // Only what the signature needs. The body is shaped so that the runtime sends Content-Length
        // (put-body.ts); the header by hand too, except where that makes it sent twice.
        headers: putSetsContentLength() ? { 'content-length': String(size) } : {},
        body: ({ touch }) => {
          newConnection = false;
          if (departure === undefined) {
            departure = window.depart();
            newConnection = departure.newConnection;
          }
          attempts += 1;
          sentAt = performance.now();
          meter = new BodyMeter(name, size, (bytes) => {
            // Bytes moving keep the attempt alive: the timeout measures a stall, not the whole upload.
            touch(bytes === size && meter !== undefined ? drainGraceMs(size, meter.transportWaitMs) : 0);
            tracker.update(name, size, bytes);
          });
          meters.push(meter);
          // An empty file's source was read to its end before the first attempt (readEmptySource).
          return size > 0 ? sizedBody(size, source.open(meter)) : new Uint8Array(0);
        },
        // Signed addresses carry their own authorization; a bearer token must never reach the storage host.
        auth: 'none',
        maxResponseBytes: MAX_PUT_RESPONSE_BYTES,
        retryPolicy: source.reopenable ? 'idempotent' : 'never',
        ...(source.reopenable && { recover: [resign] }),
        runStopped: run.stopped,
        call,
        onBackPressure: ({ reason, retryAfterMs }) => {
          if (reason !== 'timed-out') run.patience.pushedBack();
          window.onBackPressure(reason, retryAfterMs, sentAt);
        },
        mapError: (response, bodyText): UploadError =>
          toUploadError(name, response.status, bodyText, {
            retryAfterMs: parseRetryAfterHeader(response.headers.get('retry-after')),
            requestId: requestIdFrom(response.headers),
          }),
      });
      if (!result.ok) {
        const { error } = result;
        if (error instanceof AbortError) return failed(asUploadError(name, error));
        const outcome = failed(meter?.sourceError ?? asUploadError(name, error));
        // The run stopped before this file's next attempt: its last answer says nothing of the others'.
        if (result.nextAttemptCut) return outcome;
        // Past the run's patience, a file the storage host refused with a 429 or 503 says it is still down.
        if (error instanceof UploadError && isPushBack(error) && run.patience.runOut) {
          return { ...outcome, stopsTheRun: error };
        }
        return stopping(outcome, error);
      }
      // The storage host may answer before the source's last check fails (a file that changed
      // while being read): what it stored is not the file, so the file is not uploaded.
      if (meter?.sourceError) return failed(meter.sourceError);
      const requestId = requestIdFrom(result.response.headers);
      // A host that answers 2xx before it was handed the whole body cannot hold the whole file.
      if (meter !== undefined && meter.bytes < size) {
        const { status } = result.response;
        const message = `The storage host answered ${status} after ${meter.bytes} of the ${size} bytes of ${JSON.stringify(name)} were sent, so the file cannot have been stored whole; it was not uploaded.`;
        return failed(new UploadError(name, message, { status, ...(requestId !== undefined && { requestId }) }));
      }
      window.onRoundTrip({ startedAt: sentAt, endedAt: performance.now(), bytes: size, newConnection });
      run.patience.accepted();
      tracker.complete(name, size);
      const etag = result.response.headers.get('etag');
      return {
        result: {
          name,
          bytes: size,
          status: 'uploaded',
          attempts,
          ...(etag !== null && { etag }),
          ...(requestId !== undefined && { requestId }),
        },
      };
    } finally {
      if (departure) window.landed(departure);
      // A failed attempt may leave its source open (fetch does not always cancel a body it never read).
      await Promise.all(meters.map((each) => each.dispose()));
    }
  }
}

/** Marks a failed file whose error every other file would meet too: the run stops with that error. */
function stopping(
  outcome: { result: UploadFileResult },
  raw: unknown,
): { result: UploadFileResult; stopsTheRun?: PushError } {
  return raw instanceof PushError && !(raw instanceof AbortError) && stopsTheRun(raw)
    ? { ...outcome, stopsTheRun: raw }
    : outcome;
}

/**
 * Every input as a source, all checked (names included) before any request. When one is refused,
 * the callers' streams of the others are closed: the upload will not read them.
 */
async function uploadSources(files: readonly UploadInput[]): Promise<UploadSource[]> {
  const settled = await Promise.allSettled(files.map(toUploadSource));
  const sources = settled.flatMap((entry) => (entry.status === 'fulfilled' ? [entry.value] : []));
  try {
    const refused = settled.find((entry) => entry.status === 'rejected');
    if (refused !== undefined) throw refused.reason;
    assertValidFileNames(sources.map((source) => source.name));
    return sources;
  } catch (error) {
    for (const source of sources) source.discard?.();
    throw error;
  }
}

function buildReport(
  sources: readonly UploadSource[],
  results: readonly (UploadFileResult | undefined)[],
  started: number,
  stoppedBy: PushError | undefined,
): UploadReport {
  const files = sources.map(
    (source, index): UploadFileResult =>
      results[index] ?? { name: source.name, bytes: source.size, status: 'not-started', attempts: 0 },
  );
  const count = (status: UploadFileResult['status']) => files.filter((file) => file.status === status).length;
  return {
    files,
    filesUploaded: count('uploaded'),
    filesFailed: count('failed'),
    filesNotStarted: count('not-started'),
    bytesUploaded: files.reduce((sum, file) => sum + (file.status === 'uploaded' ? file.bytes : 0), 0),
    durationMs: Math.round(performance.now() - started),
    ...(stoppedBy !== undefined && { stoppedBy }),
  };
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortErrorFrom(signal);
}

/**
 * The most of a body that the runtime's and the system's buffers hold once it is handed over: a
 * chunk in the runtime's socket, a few MiB in the kernel (Linux's send buffer grows to 4 MiB).
 */
const BUFFERED_BYTES = 8 * 1024 * 1024;

/**
 * How much longer than `timeoutMs` the answer to a PUT may take once its last byte is handed over:
 * what the buffers may still hold of it goes out at the link's pace, unseen. That pace is the one
 * the transport took the body at (`transportWaitMs`: the time the link, not the source, set), and
 * at most BUFFERED_BYTES of the body are left, so a long upload's grace stays a few seconds.
 */
function drainGraceMs(size: number, transportWaitMs: number): number {
  if (size <= 0 || transportWaitMs <= 0) return 0;
  return (transportWaitMs * Math.min(size, BUFFERED_BYTES)) / size;
}

/**
 * Where an upload's window starts when its first files are small: as many leading files (up to the
 * bound) as fit in one address batch, so that the service gets one address request for the first
 * round; undefined (the limiter's default) when fewer than that default fit.
 */
function smallFilesAtStart(sources: readonly UploadSource[], bound: number): number | undefined {
  let bytes = 0;
  let count = 0;
  for (const source of sources) {
    if (count >= bound) break;
    bytes += source.size;
    if (bytes > ADDRESS_BATCH_BYTES) break;
    count++;
  }
  return count > INITIAL_WINDOW ? count : undefined;
}

// ── Progress ─────────────────────────────────────────────────────────────────────────────────────
// Per-attempt byte counts (the metered body of put-body.ts) feeding one monotonic total per call.

/**
 * Totals for one `upload` call. Each file reports the bytes of its current attempt; the tracker
 * keeps the file's high-water mark, so a re-sent attempt does not move the totals backwards and
 * only counts again past the point the previous attempt reached.
 */
class ProgressTracker {
  readonly #marks = new Map<string, number>();
  #bytes = 0;
  readonly #onProgress: ((progress: UploadProgress) => void) | undefined;
  readonly #logger: Logger;

  constructor(
    readonly totalBytes: number,
    onProgress: ((progress: UploadProgress) => void) | undefined,
    logger: Logger,
  ) {
    this.#onProgress = onProgress;
    this.#logger = logger;
  }

  /** Records that the current attempt of `file` has sent `attemptBytes` so far. */
  update(file: string, fileTotal: number, attemptBytes: number): void {
    const mark = this.#marks.get(file) ?? 0;
    if (attemptBytes <= mark) return;
    this.#marks.set(file, attemptBytes);
    this.#bytes += attemptBytes - mark;
    this.#emit({ file, fileBytes: attemptBytes, fileTotal, bytes: this.#bytes, totalBytes: this.totalBytes });
  }

  /** A file finished: all its bytes count, and an empty file gets its one event too. */
  complete(file: string, fileTotal: number): void {
    if (fileTotal === 0 && !this.#marks.has(file)) {
      this.#marks.set(file, 0);
      this.#emit({ file, fileBytes: 0, fileTotal, bytes: this.#bytes, totalBytes: this.totalBytes });
      return;
    }
    this.update(file, fileTotal, fileTotal);
  }

  #emit(progress: UploadProgress): void {
    if (this.#onProgress === undefined) return;
    // A broken progress bar must not fail an upload, nor, when it is async and rejects, become an
    // unhandled rejection that ends the process.
    const threw = (error: unknown) =>
      this.#logger.warn('push-api-client onProgress callback threw', {
        error: error instanceof Error ? error.message : String(error),
      });
    try {
      ignoreRejection(this.#onProgress(progress), threw);
    } catch (error) {
      threw(error);
    }
  }
}

// ── The address book ─────────────────────────────────────────────────────────────────────────────
// Signed addresses for the files of one `upload` call, asked for in batches sized to the work: as
// many names as fit in one request URL, so that a call whose names all fit makes one request.

/** Asks the service for the addresses of these names, in one request when they fit in one URL. */
type AddressFetcher = (names: string[]) => Promise<Record<string, string>>;

/**
 * One request per batch, shared by the workers that wait for it. A batch ends where its request
 * URL would pass the length limit, or where its files would pass {@link ADDRESS_BATCH_BYTES}:
 * addresses expire, so a batch of large files is kept short enough to be sent while they are
 * fresh. The next batch is asked for when the files of this one start running out (as many left
 * as there are workers), so that no worker waits for a round trip.
 */
class AddressBook {
  readonly #sources: readonly UploadSource[];
  readonly #fetch: AddressFetcher;
  readonly #workers: number;
  /** The first file of each batch, in order, and the length of the file list as the last entry. */
  readonly #starts: number[];
  readonly #batches = new Map<number, Promise<Record<string, string>>>();

  constructor(
    sources: readonly UploadSource[],
    fetch: AddressFetcher,
    options: { workers: number; endpoint: URL; type: UploadFileType | undefined },
  ) {
    this.#sources = sources;
    this.#fetch = fetch;
    this.#workers = options.workers;
    this.#starts = batchStarts(sources, new AddressRequestRoom(options.endpoint, options.type));
  }

  /** The number of address requests the whole call makes, when every file gets its turn. */
  get batchCount(): number {
    return this.#starts.length - 1;
  }

  /** The signed address of file `index` (an empty string when the answer had none, which the PUT refuses). */
  async get(index: number): Promise<string> {
    const batch = this.#batchOf(index);
    const pending = this.#request(batch);
    const next = this.#starts[batch + 1] ?? this.#sources.length;
    if (next - index <= this.#workers) this.#request(batch + 1);
    const addresses = await pending;
    return addresses[(this.#sources[index] as UploadSource).name] ?? '';
  }

  /** The batch holding file `index`: the last whose start is at or before it. */
  #batchOf(index: number): number {
    let low = 0;
    let high = this.#starts.length - 2;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((this.#starts[middle] as number) <= index) low = middle;
      else high = middle - 1;
    }
    return low;
  }

  #request(batch: number): Promise<Record<string, string>> {
    let pending = this.#batches.get(batch);
    if (pending !== undefined || batch >= this.batchCount) return pending ?? Promise.resolve({});
    const first = this.#starts[batch] as number;
    const end = this.#starts[batch + 1] as number;
    const names: string[] = [];
    for (let index = first; index < end; index++) names.push((this.#sources[index] as UploadSource).name);
    // Its connection goes back to the pool before the PUTs that wait for these addresses are sent.
    pending = this.#fetch(names).then(async (addresses) => {
      await nextTurn();
      return addresses;
    });
    // Asked for ahead of need: if the run stops first, nobody awaits it, and its failure is moot.
    pending.catch(() => undefined);
    this.#batches.set(batch, pending);
    return pending;
  }
}

/** Where each batch starts, the file count appended: greedy, in file order, each batch at least one file. */
function batchStarts(sources: readonly UploadSource[], room: AddressRequestRoom): number[] {
  const starts: number[] = [];
  let bytes = 0;
  for (let index = 0; index < sources.length; index++) {
    const { name, size } = sources[index] as UploadSource;
    const full = starts.length > 0 && (!room.tryAdd(name).added || bytes + size > ADDRESS_BATCH_BYTES);
    if (starts.length === 0 || full) {
      starts.push(index);
      room.clear();
      room.tryAdd(name);
      bytes = 0;
    }
    bytes += size;
  }
  starts.push(sources.length);
  return starts;
}

// ── The address requests ─────────────────────────────────────────────────────────────────────────
// The upload-address operation (spec, operation 2): the file names checked before any request,
// the URLs that ask for their addresses, and the answer checked address by address.

/** `{base_url}/services/push/v1/customer/apps/{appId}/upload`; the app id is checked and encoded once, by appResourceUrl (http/http-client.ts). */
function uploadUrlsEndpoint(baseUrl: URL, appId: string): URL {
  return appResourceUrl(baseUrl, appId, 'upload');
}

function encodedParam(key: string, value: string): string {
  return new URLSearchParams([[key, value]]).toString();
}

/** Characters `application/x-www-form-urlencoded` leaves as they are: ASCII letters, digits, `*-._`. */
function isFormSafe(unit: number): boolean {
  return (
    (unit >= 0x61 && unit <= 0x7a) ||
    (unit >= 0x41 && unit <= 0x5a) ||
    (unit >= 0x30 && unit <= 0x39) ||
    unit === 0x2a ||
    unit === 0x2d ||
    unit === 0x2e ||
    unit === 0x5f
  );
}

/**
 * The length of `text` as URLSearchParams writes it, counted without building it (this runs once
 * per file): a safe character or a space ("+") is one character; any other is `%XX` per UTF-8 byte,
 * an unpaired surrogate being written as U+FFFD (three bytes).
 */
function formEncodedLength(text: string): number {
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit === 0x20 || isFormSafe(unit)) length += 1;
    else if (unit < 0x80) length += 3;
    else if (unit < 0x800) length += 6;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        length += 12;
        i++;
      } else length += 9;
    } else length += 9;
  }
  return length;
}

/** The length of `filenames=<name>` in a query string. */
function filenamePairLength(name: string): number {
  return 'filenames='.length + formEncodedLength(name);
}

/**
 * The room in one upload-address request URL, filled name by name: each URL stays shorter than
 * `maxLength`, because proxies commonly refuse longer request lines. Names go in as repeated
 * `filenames=` parameters (never `filenames[]`), after the type parameter when there is one.
 */
class AddressRequestRoom {
  readonly #baseLength: number;
  readonly #maxLength: number;
  #length: number;
  #names = 0;

  constructor(endpoint: URL, type: UploadFileType | undefined, maxLength: number = MAX_UPLOAD_URLS_URL_LENGTH) {
    const fixed = new URL(endpoint.href);
    fixed.search = '';
    fixed.hash = '';
    // "?" plus the type parameter and its "&" are part of every request.
    this.#baseLength = fixed.href.length + 1 + (type === undefined ? 0 : encodedParam('type', type).length + 1);
    this.#maxLength = maxLength;
    this.#length = this.#baseLength;
  }

  /** Whether `name` could go in a request of its own. */
  fitsAlone(name: string): boolean {
    return this.#baseLength + filenamePairLength(name) < this.#maxLength;
  }

  /**
   * Adds `name` when it fits beside the names already in. An empty room takes any name (one that
   * does not fit alone fails when its request is built, naming it), so every name finds a request.
   */
  tryAdd(name: string): { added: true } | { added: false; reason: 'full' } {
    const pairLength = filenamePairLength(name);
    const length = this.#length + (this.#names > 0 ? 1 : 0) + pairLength;
    if (this.#names > 0 && length >= this.#maxLength) return { added: false, reason: 'full' };
    this.#length = length;
    this.#names += 1;
    return { added: true };
  }

  /** Empties the room for the next request. */
  clear(): void {
    this.#length = this.#baseLength;
    this.#names = 0;
  }
}

/** Splits the names over as few request URLs as possible, each under `maxLength` (see {@link AddressRequestRoom}). */
function uploadUrlsRequests(
  endpoint: URL,
  names: readonly string[],
  type?: UploadFileType,
  maxLength: number = MAX_UPLOAD_URLS_URL_LENGTH,
): URL[] {
  const fixed = new URL(endpoint.href);
  fixed.search = '';
  fixed.hash = '';
  const room = new AddressRequestRoom(fixed, type, maxLength);
  const urls: URL[] = [];
  let group: string[] = [];
  const flush = () => {
    const url = new URL(fixed.href);
    const params = new URLSearchParams();
    for (const name of group) params.append('filenames', name);
    if (type !== undefined) params.append('type', type);
    url.search = params.toString();
    urls.push(url);
    group = [];
    room.clear();
  };
  for (const name of names) {
    if (!room.fitsAlone(name)) {
      throw new UploadError(name, `File name ${JSON.stringify(name)} is too long to fit in an upload-address request.`);
    }
    if (!room.tryAdd(name).added) {
      flush();
      room.tryAdd(name);
    }
    group.push(name);
  }
  if (group.length > 0) flush();
  return urls;
}

/** What a signed address is checked against: the transport's http rule and where the service itself is. */
interface AddressRules {
  allowInsecureHttp: boolean;
  /** The configured `baseUrl`: the service that hands out the addresses. */
  service: URL;
}

/**
 * Why a signed address is refused, or undefined. A file goes no closer to this machine than the
 * service that handed out its address (http/fetch.ts). Credentials in the address are refused:
 * a signed address carries its authorization in the query, and `user:pass@` would be sent as Basic auth.
 */
function addressProblem(url: URL, rules: AddressRules): string | undefined {
  if (url.username !== '' || url.password !== '') return 'carries credentials (user:password@)';
  return closerThanService(url, rules.service);
}

/**
 * Checks the answer: a JSON object with exactly one absolute http(s) URL per requested name, each
 * passing the https-only rule and the network rule (no loopback or private-network address from a
 * service that is not there itself), because a file must never go to an address we did not ask for.
 */
function parseUploadUrlMap(body: unknown, requested: readonly string[], rules: AddressRules): Record<string, string> {
  const { allowInsecureHttp } = rules;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new PushError('The upload-address response is not a JSON object mapping file names to addresses.');
  }
  const map = body as Record<string, unknown>;
  const wanted = new Set(requested);
  const extra: string[] = [];
  let firstExtra: string | undefined;
  let extraCount = 0;
  for (const key in map) {
    if (!Object.hasOwn(map, key) || wanted.has(key)) continue;
    // A hostile answer may name a million files, each a megabyte long: a few, cut short, are quoted.
    firstExtra ??= key;
    if (extra.length < 3) extra.push(JSON.stringify(truncateText(key, 60)));
    extraCount++;
  }
  if (extraCount > 0) {
    const more = extraCount > extra.length ? ` and ${extraCount - extra.length} more` : '';
    throw new UploadError(
      truncateText(firstExtra ?? '', 200),
      `The upload-address response has addresses for names that were not requested: ${extra.join(', ')}${more}.`,
    );
  }
  const out: Record<string, string> = {};
  for (const name of requested) {
    const value = Object.hasOwn(map, name) ? map[name] : undefined;
    if (value === undefined)
      throw new UploadError(name, `The upload-address response has no address for ${JSON.stringify(name)}.`);
    if (typeof value !== 'string')
      throw new UploadError(name, `The upload address for ${JSON.stringify(name)} is not a string.`);
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new UploadError(name, `The upload address for ${JSON.stringify(name)} is not an absolute URL.`);
    }
    try {
      assertSecureUrl(url, `signed upload address for ${JSON.stringify(name)}`, allowInsecureHttp);
    } catch (error) {
      throw new UploadError(name, error instanceof Error ? error.message : String(error), { cause: error });
    }
    const problem = addressProblem(url, rules);
    if (problem !== undefined) {
      throw new UploadError(name, `The upload address for ${JSON.stringify(name)} ${problem}; it is not used.`);
    }
    // defineProperty: `out["__proto__"] = value` would set the prototype instead of adding the name.
    Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** Throws an `UploadError` naming the first invalid or repeated name. */
function assertValidFileNames(names: readonly string[]): void {
  const seen = new Set<string>();
  for (const name of names) {
    const problem = fileNameProblem(name);
    if (problem !== undefined)
      throw new UploadError(String(name), `Invalid file name ${JSON.stringify(name)}: it ${problem}.`);
    // The address map is keyed by name, so two files with one name would share one address.
    if (seen.has(name))
      throw new UploadError(
        name,
        `Duplicate file name ${JSON.stringify(name)}: each file of one call needs its own name.`,
      );
    seen.add(name);
  }
}

// ── The inputs ───────────────────────────────────────────────────────────────────────────────────
// Each `UploadInput` turned into an `UploadSource`: a name, a size, and a way to open its bytes.

/**
 * Normalises one input. Paths are checked here (they must be readable regular files), so that
 * problems surface before any request; their bytes are read only when `open` is streamed.
 */
async function toUploadSource(input: UploadInput): Promise<UploadSource> {
  if (typeof input === 'string') return fileUploadSource(input);
  if (input === null || typeof input !== 'object') {
    throw new UploadError(
      '',
      `Invalid upload input: expected a path or an object, got ${input === null ? 'null' : typeof input}.`,
    );
  }
  if ('path' in input && typeof input.path === 'string') return fileUploadSource(input.path, input.name);
  if ('data' in input) return fromData(input.name, input.data);
  if ('stream' in input) return fromStream(input);
  const name = typeof (input as { name?: unknown }).name === 'string' ? (input as { name: string }).name : '';
  throw new UploadError(
    name,
    `Invalid upload input ${JSON.stringify(name)}: give one of "path", "data" or "stream" (with "size").`,
  );
}

function fromData(name: string, data: string | Uint8Array | Blob): UploadSource {
  if (data instanceof Blob) {
    assertUploadableSize(name, data.size);
    return {
      name,
      size: data.size,
      reopenable: true,
      open: (meter) =>
        bodyStream(name, data.size, meter, iteratorReader(name, toAsyncIterator(data.stream()), data.size)),
    };
  }
  const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
  if (!(bytes instanceof Uint8Array)) {
    throw new UploadError(
      name,
      `Invalid data for file ${JSON.stringify(name)}: expected a string, Uint8Array, Buffer or Blob.`,
    );
  }
  assertUploadableSize(name, bytes.byteLength);
  const size = bytes.byteLength;
  return { name, size, reopenable: true, open: (meter) => bodyStream(name, size, meter, sliceReader(bytes)) };
}

function fromStream(input: UploadStreamInput): UploadSource {
  const { name, size } = input;
  if (!isStreamLike(input.stream)) {
    throw new UploadError(
      name,
      `The "stream" of file ${JSON.stringify(name)} must be a Node Readable, a web ReadableStream or an async iterable of bytes.`,
    );
  }
  try {
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) {
      throw new UploadError(
        name,
        `File ${JSON.stringify(name)} needs a declared "size" (a whole number of bytes) to be sent with Content-Length.`,
      );
    }
    assertUploadableSize(name, size);
  } catch (error) {
    // Refused, its stream is never read: it is closed, as those of the other inputs are.
    closeUnread(input.stream);
    throw error;
  }
  let opened = false;
  return {
    name,
    size,
    reopenable: false,
    open: (meter) => {
      if (opened)
        throw new UploadError(
          name,
          `The stream of file ${JSON.stringify(name)} was already read; it cannot be sent again.`,
        );
      opened = true;
      return bodyStream(name, size, meter, iteratorReader(name, toAsyncIterator(input.stream)));
    },
    discard: () => {
      if (opened) return;
      opened = true;
      closeUnread(input.stream);
    },
  };
}

/**
 * Closes a stream nobody read: a Node stream is destroyed, a web stream cancelled, an async
 * iterable (a generator) returned. What closing it says (a rejected cancel, a generator's
 * complaint) is about a stream the upload no longer needs, so it is left out.
 */
function closeUnread(stream: AnyStream): void {
  try {
    if (isWebStream(stream)) {
      if (!stream.locked) stream.cancel().catch(() => undefined);
      return;
    }
    const destroy = (stream as { destroy?: unknown }).destroy;
    if (typeof destroy === 'function') {
      destroy.call(stream);
      return;
    }
    const result = (stream as AsyncIterable<unknown>)[Symbol.asyncIterator]().return?.();
    if (result !== undefined) Promise.resolve(result).catch(() => undefined);
  } catch {
    // A stream whose close throws is one the caller built oddly; the upload's own outcome stands.
  }
}

/** Hands out in-memory bytes in slices (views, not copies), so progress advances as they are sent. */
function sliceReader(bytes: Uint8Array): ChunkReader {
  let offset = 0;
  return {
    read: async () => {
      if (offset >= bytes.byteLength) return undefined;
      const end = Math.min(offset + MEMORY_CHUNK_BYTES, bytes.byteLength);
      const slice = bytes.subarray(offset, end);
      offset = end;
      return slice;
    },
    atEnd: () => offset >= bytes.byteLength,
    close: async () => undefined,
  };
}

type AnyStream = UploadStreamInput['stream'];

/**
 * Reads a Node stream, async iterable or web stream on demand (backpressure kept), chunk by chunk.
 * `exactSize`: the iterator yields exactly this many bytes (a Blob's stream), so the body can end
 * with its last chunk; a caller's stream is read until it says it is done.
 */
function iteratorReader(name: string, iterator: AsyncIterator<unknown>, exactSize?: number): ChunkReader {
  let done = false;
  let reading = false;
  let bytes = 0;
  return {
    atEnd: () => bytes === exactSize,
    async read() {
      reading = true;
      let next: IteratorResult<unknown>;
      try {
        next = await iterator.next();
      } catch (error) {
        // Closed by the upload (an abort, a timeout): the stream's complaint is about that, not its own.
        if (done) throw error;
        throw streamFailed(name, error);
      } finally {
        reading = false;
      }
      if (next.done) {
        done = true;
        return undefined;
      }
      const chunk: unknown = next.value;
      const bytesOfChunk = typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk;
      if (bytesOfChunk instanceof Uint8Array) {
        bytes += bytesOfChunk.byteLength;
        return bytesOfChunk;
      }
      throw new UploadError(name, `The stream of file ${JSON.stringify(name)} yielded a ${typeof chunk}, not bytes.`);
    },
    async close(reason) {
      if (done) return;
      done = true;
      // Lets a Node stream release its file descriptor or socket when the PUT is abandoned.
      const closing = iterator.return?.(reason);
      // An async generator runs `return()` only after its pending `next()`; one that never yields
      // again would hold the upload forever, so the close goes on without it.
      if (reading) closing?.catch(() => undefined);
      else await closing;
    },
  };
}

/**
 * The caller's stream failed while it was read. fetch would report this as a bare "fetch failed"
 * with the caller's error buried in its causes, so the file's error names the source instead.
 */
function streamFailed(name: string, error: unknown): UploadError {
  const reason = error instanceof Error ? error.message : String(error);
  return new UploadError(name, `The stream of file ${JSON.stringify(name)} failed: ${reason}`, { cause: error });
}

function isWebStream(stream: unknown): stream is ReadableStream<Uint8Array> {
  return typeof (stream as ReadableStream<Uint8Array> | null)?.getReader === 'function';
}

function isStreamLike(stream: unknown): stream is AnyStream {
  return isWebStream(stream) || (stream !== null && typeof stream === 'object' && Symbol.asyncIterator in stream);
}

function toAsyncIterator(stream: AnyStream): AsyncIterator<unknown> {
  if (isWebStream(stream)) {
    const reader = (stream as ReadableStream<Uint8Array>).getReader();
    return {
      next: async () => {
        const { done, value } = await reader.read();
        return done ? { done: true, value: undefined } : { done: false, value };
      },
      return: async (reason?: unknown) => {
        await reader.cancel(reason);
        return { done: true, value: undefined };
      },
    };
  }
  const iterator = (stream as AsyncIterable<unknown>)[Symbol.asyncIterator]();
  const destroy = (stream as { destroy?: unknown }).destroy;
  if (typeof destroy !== 'function') return iterator;
  // A Node stream's iterator runs `return()` only once a pending `next()` settles, which never
  // happens while the stream stalls: an abort or a timeout would wait for it forever. Destroying
  // the stream settles that read, then the iterator closes as usual.
  return {
    next: () => iterator.next(),
    return: async (reason?: unknown) => {
      destroy.call(stream);
      return (await iterator.return?.(reason)) ?? { done: true, value: undefined };
    },
  };
}
