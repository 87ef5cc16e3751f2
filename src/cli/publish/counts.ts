/** Running counts of one `finance publish` run; every row ends in exactly one of the record buckets. */
export interface PublishCounts {
  rowsRead: number;
  recordsValid: number;
  recordsSent: number;
  recordsInvalid: number;
  recordsFailed: number;
  recordsUnknown: number;
  /** Rows the run stopped before sending: read ahead and never sent, or never read at all. */
  recordsNotRead: number;
  /** Delivered by an earlier run with the same checkpoint, so not sent again. */
  recordsSkipped: number;
  /** Rows `--transform` returned null for: read, neither sent nor invalid. */
  recordsFiltered: number;
  batchesSent: number;
  batchesFailed: number;
  batchesUnknown: number;
}

export function emptyCounts(): PublishCounts {
  return {
    rowsRead: 0,
    recordsValid: 0,
    recordsSent: 0,
    recordsInvalid: 0,
    recordsFailed: 0,
    recordsUnknown: 0,
    recordsNotRead: 0,
    recordsSkipped: 0,
    recordsFiltered: 0,
    batchesSent: 0,
    batchesFailed: 0,
    batchesUnknown: 0,
  };
}
