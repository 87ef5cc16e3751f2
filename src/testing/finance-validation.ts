/**
 * Validation of a finance request body against the spec's property table, which is authoritative
 * (so `merchant`, shown only in the spec's schematic, is an unknown property).
 *
 * Decisions where the spec is silent:
 * - `created` must be a non-negative integer (a Unix timestamp in milliseconds).
 * - Required strings must not be empty; `null` is a wrong type for every property.
 * - An empty `records` array is accepted and stores nothing.
 * - The body object must hold `records` and nothing else.
 */
import type { FinanceRecord } from './finance-store.js';

/**
 * Most records one finance request may hold (spec, "Limits"); the emulator answers a larger one
 * with 422. The client's `batchSize` cannot exceed it.
 */
export const MAX_RECORDS_PER_REQUEST = 1000;
const MAX_ISSUES_IN_MESSAGE = 5;

export interface FinanceIssue {
  /** Index of the record in `records`; undefined for problems with the body as a whole. */
  index: number | undefined;
  field: string;
  message: string;
}

type FieldCheck = (value: unknown) => string | undefined;

const requiredString: FieldCheck = (value) =>
  typeof value !== 'string' ? 'must be a string' : value === '' ? 'must not be empty' : undefined;
const optionalString: FieldCheck = (value) => (typeof value !== 'string' ? 'must be a string' : undefined);

const REQUIRED: Record<string, FieldCheck> = {
  created: (value) =>
    typeof value !== 'number'
      ? 'must be a number'
      : !Number.isSafeInteger(value) || value < 0
        ? 'must be a non-negative integer (Unix time in ms)'
        : undefined,
  amount: (value) =>
    typeof value !== 'number' ? 'must be a number' : !Number.isFinite(value) ? 'must be finite' : undefined,
  currency: (value) =>
    typeof value !== 'string'
      ? 'must be a string'
      : !/^[A-Z]{3}$/.test(value)
        ? 'must be an ISO 4217 code (three capital letters)'
        : undefined,
  identifier: requiredString,
  type: (value) =>
    typeof value !== 'string'
      ? 'must be a string'
      : value !== 'expense' && value !== 'invoice'
        ? 'must be "expense" or "invoice"'
        : undefined,
  vendor: requiredString,
};

const OPTIONAL: Record<string, FieldCheck> = {
  name: optionalString,
  category: optionalString,
  description: optionalString,
  transactionNumber: optionalString,
};

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkRecord(record: unknown, index: number, issues: FinanceIssue[]): void {
  if (!isPlainObject(record)) {
    issues.push({ index, field: '', message: 'must be an object' });
    return;
  }
  for (const [field, check] of Object.entries(REQUIRED)) {
    if (!Object.hasOwn(record, field)) {
      issues.push({ index, field, message: 'is required' });
      continue;
    }
    const problem = check(record[field]);
    if (problem) issues.push({ index, field, message: problem });
  }
  for (const field of Object.keys(record)) {
    if (Object.hasOwn(REQUIRED, field)) continue;
    const check = Object.hasOwn(OPTIONAL, field) ? OPTIONAL[field] : undefined;
    if (!check) {
      issues.push({ index, field, message: 'is not a known property' });
      continue;
    }
    const problem = check(record[field]);
    if (problem) issues.push({ index, field, message: problem });
  }
}

export type FinanceValidation = { ok: true; records: FinanceRecord[] } | { ok: false; issues: FinanceIssue[] };

/** Checks a parsed body; stops collecting after a handful of issues, which is all a message shows. */
export function validateFinanceBody(body: unknown): FinanceValidation {
  if (!isPlainObject(body)) return fail(undefined, '', 'body must be a JSON object');
  for (const key of Object.keys(body)) {
    if (key !== 'records') return fail(undefined, key, 'is not a known property of the body');
  }
  const records = body.records;
  if (!Array.isArray(records)) {
    return fail(undefined, 'records', records === undefined ? 'is required' : 'must be an array');
  }
  if (records.length > MAX_RECORDS_PER_REQUEST) {
    return fail(undefined, 'records', `holds ${records.length} records; at most ${MAX_RECORDS_PER_REQUEST} allowed`);
  }
  const issues: FinanceIssue[] = [];
  for (let index = 0; index < records.length && issues.length <= MAX_ISSUES_IN_MESSAGE; index++) {
    checkRecord(records[index], index, issues);
  }
  return issues.length === 0 ? { ok: true, records: records as FinanceRecord[] } : { ok: false, issues };
}

function fail(index: number | undefined, field: string, message: string): FinanceValidation {
  return { ok: false, issues: [{ index, field, message }] };
}

/** "records[3].amount must be finite; records[7].merchant is not a known property". */
export function describeIssues(issues: FinanceIssue[]): string {
  const shown = issues.slice(0, MAX_ISSUES_IN_MESSAGE).map((issue) => {
    const where =
      issue.index === undefined
        ? issue.field
        : issue.field === ''
          ? `records[${issue.index}]`
          : `records[${issue.index}].${issue.field}`;
    return where ? `${where} ${issue.message}` : issue.message;
  });
  const more = issues.length > MAX_ISSUES_IN_MESSAGE ? '; and more' : '';
  return shown.join('; ') + more;
}
