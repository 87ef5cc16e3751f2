import type { ClientContext } from '../context.js';
import { ConfigurationError, PushError, RecordValidationError } from '../errors.js';
import { abortErrorFrom } from '../http/delay.js';
import { AdaptiveLimit } from './adaptive-limit.js';
import { buildBody, EMPTY_BODY_BYTES } from './batcher.js';
import { PublishAbortedError } from './errors.js';
import { expectSuccess } from './outcome.js';
import { ReportBuilder } from './report.js';
import { PublishRun } from './run.js';
import type { FinanceRecordInput } from './schema.js';
import {
  BatchAssembler,
  batchesFromAsyncIterable,
  batchesFromIterable,
  batchesFromPrepared,
  prevalidate,
} from './source.js';
import { FINANCE_DEFAULTS, type PublishBatchOptions, type PublishOptions, type PublishReport } from './types.js';

type Settings = Required<
  Pick<PublishOptions, 'batchSize' | 'maxBatchBytes' | 'concurrency' | 'onInvalid' | 'adaptive'>
>;

/** Publishes finance records (SPEC.md, endpoint 4): validate, batch by count and bytes, send, report. */
export class FinancePublisher {
  constructor(private readonly ctx: ClientContext) {}

  /**
   * Publishes any number of records from an array, an iterable or an async iterable, in batches of
   * at most `batchSize` records and `maxBatchBytes` bytes, with at most `concurrency` in flight.
   * Resolves with a report in which every record read is sent, invalid, failed or unknown.
   * Rejects with `RecordValidationError` (`onInvalid: 'throw'`), `PublishAbortedError` (signal),
   * `ConfigurationError` (options, appId), or the error thrown by the input or a callback.
   */
  async publish(
    appId: string,
    records: Iterable<FinanceRecordInput> | AsyncIterable<FinanceRecordInput>,
    options: PublishOptions = {},
  ): Promise<PublishReport> {
    const url = financeUrl(this.ctx.baseUrl, appId);
    const settings = resolvePublishOptions(options);
    const { signal } = options;
    if (signal?.aborted) throw abortErrorFrom(signal);

    const report = new ReportBuilder();
    const limit = new AdaptiveLimit({ max: settings.concurrency, adaptive: settings.adaptive });
    const run = new PublishRun(this.ctx, url, report, limit, options);
    const limits = { batchSize: settings.batchSize, maxBatchBytes: settings.maxBatchBytes };
    const assembler = new BatchAssembler(limits, report, settings.onInvalid === 'throw');

    let source: ReturnType<typeof batchesFromIterable> | ReturnType<typeof batchesFromAsyncIterable>;
    if (isAsyncIterable(records)) {
      source = batchesFromAsyncIterable(records, assembler, run.shouldStop);
    } else if (!isIterable(records)) {
      throw new ConfigurationError('records must be an array, an iterable or an async iterable of finance records');
    } else if (settings.onInvalid === 'throw') {
      // Everything is checked before the first request, so the error can list every bad record.
      const checked = prevalidate(records, settings.maxBatchBytes);
      if (checked.invalid.length > 0) throw new RecordValidationError<PublishReport>(checked.invalid);
      source = batchesFromPrepared(checked.items, assembler, run.shouldStop);
    } else {
      source = batchesFromIterable(records, assembler, run.shouldStop);
    }

    await run.execute(source, settings.concurrency);
    // Left in the assembler only when reading stopped early: read, never sent.
    const leftover = assembler.flush();
    if (leftover) {
      const reason = assembler.firstInvalid
        ? new PushError(`not sent: publishing stopped at the invalid record ${assembler.firstInvalid.index}`)
        : undefined;
      await run.settleUnsent(leftover, reason);
    }

    const thrown = run.thrown;
    if (thrown) throw thrown.error;
    const result = report.build();
    if (signal?.aborted) throw new PublishAbortedError(result, { cause: signal.reason });
    if (assembler.firstInvalid) throw new RecordValidationError<PublishReport>([assembler.firstInvalid], result);
    return result;
  }

  /**
   * Sends one request of 1 to 1000 records, validated first. Resolves when the service answered
   * `{"success": true}`; otherwise rejects with the error (no report, no batching).
   */
  async publishBatch(
    appId: string,
    records: FinanceRecordInput[],
    options: PublishBatchOptions = {},
  ): Promise<{ success: true }> {
    const url = financeUrl(this.ctx.baseUrl, appId);
    if (!Array.isArray(records) || records.length === 0 || records.length > FINANCE_DEFAULTS.maxBatchSize) {
      const got = Array.isArray(records) ? `${records.length} records` : 'no array';
      throw new ConfigurationError(
        `publishBatch sends one request of 1 to ${FINANCE_DEFAULTS.maxBatchSize} records (the spec's limit), got ${got}; use publish() for more`,
      );
    }
    const checked = prevalidate(records, Number.POSITIVE_INFINITY);
    if (checked.invalid.length > 0) throw new RecordValidationError(checked.invalid);
    const body = buildBody(checked.items);
    const response = await this.ctx.http.send({
      operation: 'finance',
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json' },
      body: () => body,
      auth: 'bearer',
      retryPolicy: 'non-idempotent',
      signal: options.signal,
    });
    await expectSuccess(response);
    return { success: true };
  }
}

/**
 * `{base_url}/services/push/v1/customer/apps/{appId}/finance`. The appId is one encoded path
 * segment, so `../x` or `a/b?c` can never change the path; `.` and `..` are refused because URL
 * parsing would treat them (even percent-encoded) as dot segments.
 */
export function financeUrl(baseUrl: URL, appId: string): URL {
  if (typeof appId !== 'string' || appId.length === 0) {
    throw new ConfigurationError('appId must be a non-empty string');
  }
  if (appId === '.' || appId === '..') throw new ConfigurationError(`appId "${appId}" is not a valid application id`);
  let segment: string;
  try {
    segment = encodeURIComponent(appId);
  } catch (cause) {
    throw new ConfigurationError('appId contains an unpaired surrogate and cannot be put in a URL', { cause });
  }
  const base = baseUrl.href.endsWith('/') ? baseUrl.href : `${baseUrl.href}/`;
  return new URL(`services/push/v1/customer/apps/${segment}/finance`, base);
}

function resolvePublishOptions(options: PublishOptions): Settings {
  const settings: Settings = {
    batchSize: options.batchSize ?? FINANCE_DEFAULTS.batchSize,
    maxBatchBytes: options.maxBatchBytes ?? FINANCE_DEFAULTS.maxBatchBytes,
    concurrency: options.concurrency ?? FINANCE_DEFAULTS.concurrency,
    onInvalid: options.onInvalid ?? FINANCE_DEFAULTS.onInvalid,
    adaptive: options.adaptive ?? FINANCE_DEFAULTS.adaptive,
  };
  const max = FINANCE_DEFAULTS.maxBatchSize;
  if (!Number.isInteger(settings.batchSize) || settings.batchSize < 1 || settings.batchSize > max) {
    throw new ConfigurationError(`batchSize must be an integer from 1 to ${max} (the spec's limit per request)`);
  }
  if (!Number.isSafeInteger(settings.maxBatchBytes) || settings.maxBatchBytes <= EMPTY_BODY_BYTES) {
    throw new ConfigurationError(
      `maxBatchBytes must be an integer above ${EMPTY_BODY_BYTES}, the size of an empty body`,
    );
  }
  if (!Number.isInteger(settings.concurrency) || settings.concurrency < 1) {
    throw new ConfigurationError('concurrency must be a positive integer');
  }
  if (settings.onInvalid !== 'throw' && settings.onInvalid !== 'skip') {
    throw new ConfigurationError("onInvalid must be 'throw' or 'skip'");
  }
  return settings;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof (value as { [Symbol.asyncIterator]?: unknown } | null)?.[Symbol.asyncIterator] === 'function';
}

function isIterable(value: unknown): value is Iterable<unknown> {
  return typeof (value as { [Symbol.iterator]?: unknown } | null)?.[Symbol.iterator] === 'function';
}
