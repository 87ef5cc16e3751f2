/**
 * One page of an app's records, newest first, read from the stored batches without parsing the
 * rest: what the inspector pages and searches through, so that a million records stay responsive.
 * A search is a bounded scan (a result limit and a time budget), not an index: the emulator keeps
 * records as the JSON text of each batch, and an index would cost memory on every publish.
 */
import type { FinanceRecord, FinanceStore } from './finance-store.js';

/** What {@link EmulatorStateView.recordPage} is asked for. */
export interface RecordPageQuery {
  /** Only records whose index is below this one (a cursor: the previous page's `nextBefore`). @default every record */
  before?: number | undefined;
  /** Most records on the page (1..500). @default 50 */
  limit?: number | undefined;
  /**
   * Only records whose `transactionNumber`, `vendor` or `identifier` contains this text,
   * case-insensitive. @default no filter
   */
  search?: string | undefined;
  /** A search stops scanning after this long, and says so (`complete: false`). @default 1000 */
  timeBudgetMs?: number | undefined;
}

/** One record on a page, with where it sits and which request delivered it. */
export interface RecordPageEntry {
  /** Position in the app's records, in arrival order. */
  index: number;
  /** The `x-request-id` of the request that delivered it. */
  requestId: string;
  record: FinanceRecord;
}

/** What {@link EmulatorStateView.recordPage} answers. */
export interface RecordPage {
  /** Records the app holds. */
  total: number;
  /** Newest first. */
  records: RecordPageEntry[];
  /** The `before` of the next (older) page; undefined when nothing older is left to read. */
  nextBefore: number | undefined;
  /** Records looked at to build the page. */
  scanned: number;
  /** False when a search stopped at its time budget before reaching the oldest record. */
  complete: boolean;
}

const RECORD_PAGE_DEFAULTS = { limit: 50, maxLimit: 500, timeBudgetMs: 1000 } as const;

const SEARCHED_FIELDS = ['transactionNumber', 'vendor', 'identifier'] as const;

function clampLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return RECORD_PAGE_DEFAULTS.limit;
  return Math.min(Math.max(Math.trunc(limit), 1), RECORD_PAGE_DEFAULTS.maxLimit);
}

/** Case-insensitive (Unicode case folding) matching of `text` anywhere in a string. */
function containing(text: string): RegExp {
  return new RegExp(text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'), 'iu');
}

function matches(record: FinanceRecord, pattern: RegExp): boolean {
  return SEARCHED_FIELDS.some((field) => {
    const value = record[field];
    return typeof value === 'string' && pattern.test(value);
  });
}

export function recordPage(store: FinanceStore | undefined, query: RecordPageQuery = {}): RecordPage {
  const total = store?.count ?? 0;
  const limit = clampLimit(query.limit);
  const before = Math.min(Math.max(Math.trunc(query.before ?? total), 0), total);
  const needle = query.search?.trim() ?? '';
  const page: RecordPage = { total, records: [], nextBefore: undefined, scanned: 0, complete: true };
  if (!store || before === 0) return page;
  const pattern = containing(needle);
  // A string is escaped the same way inside a batch's JSON as on its own, so a batch holding a
  // match holds the escaped search text: batches without it are skipped unparsed.
  const batchPattern = containing(JSON.stringify(needle).slice(1, -1));
  const deadline = performance.now() + (query.timeBudgetMs ?? RECORD_PAGE_DEFAULTS.timeBudgetMs);
  let cursor = before;
  for (const batch of store.batchesBefore(before)) {
    if (needle && performance.now() > deadline) {
      page.complete = false;
      break;
    }
    const end = Math.min(before, batch.firstIndex + batch.count);
    if (needle && !(batch.json !== undefined && batchPattern.test(batch.json))) {
      page.scanned += end - batch.firstIndex;
      cursor = batch.firstIndex;
      continue;
    }
    const records = batch.json ? (JSON.parse(batch.json) as FinanceRecord[]) : [];
    for (let index = end - 1; index >= batch.firstIndex; index--) {
      cursor = index;
      page.scanned += 1;
      const record = records[index - batch.firstIndex];
      if (!record || (needle && !matches(record, pattern))) continue;
      page.records.push({ index, requestId: batch.requestId, record });
      if (page.records.length === limit) break;
    }
    if (page.records.length === limit) break;
  }
  page.nextBefore = cursor > 0 ? cursor : undefined;
  return page;
}
