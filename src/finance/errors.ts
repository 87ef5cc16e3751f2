import { AbortError } from '../errors.js';
import type { PublishReport } from './types.js';

/**
 * `publish` was aborted by the caller's signal. Still an `AbortError`; it carries the report of
 * every batch settled so far: batches in flight at the abort are `unknown` (the server may have
 * received them), batches read but not yet sent are `failed`. Records not yet read are not counted.
 */
export class PublishAbortedError extends AbortError {
  override name = 'PublishAbortedError';
  readonly report: PublishReport;

  constructor(report: PublishReport, options?: { cause?: unknown }) {
    super(
      `publish aborted: ${report.recordsSent} sent, ${report.recordsUnknown} unknown, ${report.recordsFailed} not sent`,
      options,
    );
    this.report = report;
  }
}
