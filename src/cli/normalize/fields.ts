import { type FinanceRecordField, financeRecordFields } from '../../index.js';

/** A field of a finance record. */
export type RecordField = FinanceRecordField['name'];

/** The fields of a finance record, in the order the template prints them (the order sent). */
export const RECORD_FIELDS: readonly RecordField[] = financeRecordFields.map((field) => field.name);

/** Fields every finance record needs: a header that cannot fill them is refused before anything is sent. */
export const REQUIRED_FIELDS: readonly RecordField[] = financeRecordFields
  .filter((field) => field.required)
  .map((field) => field.name);

const BY_LOWER_CASE = new Map<string, RecordField>(RECORD_FIELDS.map((field) => [field.toLowerCase(), field]));

/** Names people reach for that are another field here. A Map: `__proto__` or `constructor` is a name, not a lookup into Object.prototype. */
const SUGGESTIONS = new Map<string, RecordField>(
  Object.entries({
    merchant: 'vendor',
    supplier: 'vendor',
    payee: 'vendor',
    date: 'created',
    time: 'created',
    timestamp: 'created',
    total: 'amount',
    value: 'amount',
    kind: 'type',
    user: 'identifier',
    email: 'identifier',
    memo: 'description',
  } as const),
);

/** The record field a name stands for, matched case-insensitively and ignoring surrounding spaces. */
export function recordField(name: string): RecordField | undefined {
  return BY_LOWER_CASE.get(name.trim().toLowerCase());
}

/** A message for a name that is not a field: the field it probably means, or the list of fields. */
export function notAFieldMessage(name: string): string {
  const suggestion = SUGGESTIONS.get(name.trim().toLowerCase());
  const hint = suggestion === undefined ? `fields: ${RECORD_FIELDS.join(', ')}` : `did you mean "${suggestion}"?`;
  return `${JSON.stringify(name)} is not a field of a finance record (${hint})`;
}
