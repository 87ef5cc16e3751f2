/**
 * The table of fields is the only place a field is declared: the zod schema, the fast check, the
 * size bound and the record types are derived from it. Each test below runs over every entry of
 * the table, and the last ones over the table with a field added, built by the same functions
 * the client uses, so that adding a field to the table is shown to be the only edit needed.
 */
import fc from 'fast-check';
import { financeRecordFields } from 'push-api-client';
import { financeRecordSchema } from 'push-api-client/schema';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { z as zm } from 'zod/mini';
import { rowRules } from '../../src/cli/normalize/rules.js';
import { templateText } from '../../src/cli/publish/template.js';
import { headerToFields } from '../../src/cli/readers/csv.js';
import { compiledFastCheck, type FastCheck, interpretedFastCheck } from '../../src/finance/batch-source.js';
import {
  FIELD_NAMES,
  FINANCE_FIELDS,
  type FieldSpec,
  type FieldTable,
  type FinanceRecord,
  type FinanceRecordInput,
} from '../../src/finance/fields.js';
import { buildFinanceRecordSchema } from '../../src/finance/schema.js';

/** A valid value of a field, made from its table entry alone. */
function validValue(field: FieldSpec, seed: number): unknown {
  switch (field.kind) {
    case 'time':
      return field.min + seed;
    case 'number':
      return seed + 0.5;
    case 'enum':
      return field.values[seed % field.values.length];
    case 'text':
      return field.format
        ? fc.sample(fc.stringMatching(field.format.pattern), { numRuns: 1, seed })[0]
        : `v${seed}`.padEnd(field.minLength ?? 0, 'x');
  }
}

/** A record holding every field of `table` (`optional: false`: the required ones only). */
function recordOf(table: FieldTable, optional: boolean, seed = 1): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(table)) {
    if (field.required || optional) record[name] = validValue(field, seed);
  }
  return record;
}

const classicZod = z as unknown as typeof zm;

const REQUIRED_FIELD_NAMES = FIELD_NAMES.filter((name) => FINANCE_FIELDS[name].required);

/** The derived pieces of a table, as the client builds them. */
function derive(table: FieldTable): { schema: ReturnType<typeof buildFinanceRecordSchema>; checks: FastCheck[] } {
  const compiled = compiledFastCheck(table);
  if (!compiled) throw new Error('Node compiles code from strings: the compiled check must exist');
  return { schema: buildFinanceRecordSchema(classicZod, table), checks: [compiled, interpretedFastCheck(table)] };
}

const utf8Bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8');

/** Checks that zod, both fast checks and the bound know every field of `table`. */
function expectEveryFieldKnown(table: FieldTable): void {
  const { schema, checks } = derive(table);
  const full = recordOf(table, true);
  const parsed = schema.safeParse(full);
  expect(parsed.success).toBe(true);
  for (const check of checks) {
    const wire = check.check(full);
    // Every field, in the table's order, as zod sends it.
    expect(Object.keys(wire ?? {})).toEqual(Object.keys(table));
    expect(JSON.stringify(wire)).toBe(JSON.stringify(parsed.data));
  }

  for (const [name, field] of Object.entries(table)) {
    const { [name]: _left, ...without } = full;
    const withoutField = schema.safeParse(without);
    // zod: a required field is missing, and the issue names it; an optional one may be left out.
    expect(withoutField.success, name).toBe(!field.required);
    if (!withoutField.success) expect(withoutField.error.issues.map((issue) => issue.path.join('.'))).toEqual([name]);

    // zod: a value of the wrong type is refused with the table's message.
    const wrongType = schema.safeParse({ ...full, [name]: { not: 'a value' } });
    expect(wrongType.success, name).toBe(false);
    expect(wrongType.error?.issues.map((issue) => [issue.path.join('.'), issue.message])).toEqual([
      [name, field.message],
    ]);

    for (const check of checks) {
      expect(check.check(without) !== undefined, name).toBe(!field.required);
      expect(check.check({ ...full, [name]: { not: 'a value' } }), name).toBeUndefined();
      // The bound counts the field: it holds the bytes the field adds to the JSON.
      const withLong = { ...full, [name]: field.kind === 'text' && !field.format ? 'é'.repeat(200) : full[name] };
      const wire = check.check(withLong);
      const wireWithout = check.check(without);
      if (wire === undefined) throw new Error(`${name}: a valid record was refused`);
      expect(check.bound(wire), name).toBeGreaterThanOrEqual(utf8Bytes(wire));
      // The scan (the up-front check, which builds nothing) adds up the same bound, and refuses alike.
      expect(check.scan(withLong), name).toBe(check.bound(wire));
      expect(check.scan(without), name).toBe(wireWithout === undefined ? undefined : check.bound(wireWithout));
      expect(check.scan({ ...full, [name]: { not: 'a value' } }), name).toBeUndefined();
      if (wireWithout !== undefined) {
        expect(check.bound(wire) - check.bound(wireWithout), name).toBeGreaterThanOrEqual(
          utf8Bytes(wire) - utf8Bytes(wireWithout),
        );
      }
    }
  }
}

describe('the table of fields', () => {
  it('is known field by field to the zod schema, both fast checks and the size bound', () => {
    expectEveryFieldKnown(FINANCE_FIELDS);
  });

  it('gives the public schema its shape, in the table order, with the optional fields optional', () => {
    expect(Object.keys(financeRecordSchema.shape)).toEqual(FIELD_NAMES);
    for (const name of FIELD_NAMES) {
      const optional = financeRecordSchema.shape[name].safeParse(undefined).success;
      expect(optional, name).toBe(!FINANCE_FIELDS[name].required);
    }
  });

  it('is listed publicly, name and required, in the order sent', () => {
    expect(financeRecordFields.map((field) => [field.name, field.required])).toEqual(
      FIELD_NAMES.map((name) => [name, FINANCE_FIELDS[name].required]),
    );
    expect(Object.isFrozen(financeRecordFields) && financeRecordFields.every(Object.isFrozen)).toBe(true);
    // The table itself cannot change after the fast check was compiled from it.
    const entries = Object.values(FINANCE_FIELDS) as FieldSpec[];
    expect(Object.isFrozen(FINANCE_FIELDS) && entries.every(Object.isFrozen)).toBe(true);
  });

  it('gives the CLI its columns: a header must fill every required field, and the template has every field', () => {
    expect(headerToFields('in.csv', rowRules(), [...REQUIRED_FIELD_NAMES], true)).toEqual(REQUIRED_FIELD_NAMES);
    expect(() => headerToFields('in.csv', rowRules(), ['unrelated'], true)).toThrow(
      `the header has no column for ${REQUIRED_FIELD_NAMES.join(', ')} (`,
    );
    expect(templateText('csv').split('\n')[0]).toBe(FIELD_NAMES.join(','));
  });

  it('gives the record types their keys (checked by the type checker)', () => {
    type Names = (typeof FIELD_NAMES)[number];
    const inputKeys: [keyof FinanceRecordInput] extends [Names]
      ? [Names] extends [keyof FinanceRecordInput]
        ? true
        : false
      : false = true;
    const wireKeys: [keyof FinanceRecord] extends [Names]
      ? [Names] extends [keyof FinanceRecord]
        ? true
        : false
      : false = true;
    expect([inputKeys, wireKeys]).toEqual([true, true]);
  });

  it('has text formats whose quick test accepts exactly what their pattern does', () => {
    for (const field of Object.values(FINANCE_FIELDS) as FieldSpec[]) {
      if (field.kind !== 'text' || !field.format) continue;
      const { pattern, test } = field.format;
      const nearMatch = fc.stringMatching(pattern).chain((text) =>
        fc.oneof(
          fc.constant(text),
          fc.nat({ max: text.length }).chain((at) => fc.string({ maxLength: 2 }).map((s) => text.slice(0, at) + s)),
        ),
      );
      fc.assert(
        fc.property(fc.oneof(nearMatch, fc.string({ maxLength: 5 })), (value) => {
          expect(test(value)).toBe(pattern.test(value));
        }),
        { numRuns: 2000 },
      );
    }
  });
});

describe('a field added to the table', () => {
  const added: Record<string, FieldSpec> = {
    costCenter: { kind: 'text', required: false, message: 'expected a string' },
    quantity: { kind: 'number', required: true, message: 'expected a finite number' },
    settled: { kind: 'time', required: false, min: 0, max: 8_640_000_000_000_000, message: 'expected a time' },
    channel: { kind: 'enum', required: false, values: ['web', 'store'], message: 'expected "web" or "store"' },
    reference: { kind: 'text', required: true, minLength: 2, message: 'expected a reference' },
  };

  it.each(Object.entries(added))(
    '%s is known to the zod schema, both fast checks and the bound, with no other edit',
    (name, field) => {
      expectEveryFieldKnown({ ...FINANCE_FIELDS, [name]: field });
    },
  );

  it('is refused as unknown by the table without it', () => {
    const { checks, schema } = derive(FINANCE_FIELDS);
    const record = { ...recordOf(FINANCE_FIELDS, false), costCenter: 'x' };
    for (const check of checks) expect(check.check(record)).toBeUndefined();
    expect(schema.safeParse(record).error?.issues.map((issue) => issue.path.join('.') || issue.code)).toEqual([
      'unrecognized_keys',
    ]);
  });
});
