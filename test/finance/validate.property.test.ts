import fc from 'fast-check';
import { financeRecordSchema } from 'push-api-client/schema';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  checkRecord,
  compiledFastCheck,
  type FastCheck,
  interpretedFastCheck,
} from '../../src/finance/batch-source.js';
import { FIELD_NAMES, FINANCE_FIELDS, type FieldSpec } from '../../src/finance/fields.js';

// The first record only zod can judge loads it; from then on every check answers at once.
beforeAll(() => checkRecord({}));

const compiled = compiledFastCheck();
if (!compiled) throw new Error('Node compiles code from strings: the compiled check must exist');
/** The check compiled from the table, and the same rules run from the table where code cannot be compiled. */
const fastChecks: [string, FastCheck][] = [
  ['compiled', compiled],
  ['interpreted', interpretedFastCheck()],
];

const FLOOR = 100_000_000_000; // 1973-03-03T09:46:40Z, the earliest created accepted
/** Every field of the table, so that a field added to it is mutated too. */
const FIELDS = FIELD_NAMES;

/** Values chosen to sit on the schema's edges, mixed with anything at all. */
const edgeValue = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.constantFrom<unknown>(
      0,
      -0,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      Number.MAX_SAFE_INTEGER,
      Number.MAX_SAFE_INTEGER + 2,
      8_640_000_000_000_000,
      8_640_000_000_000_001,
      FLOOR,
      FLOOR - 1,
      FLOOR + 0.5,
      1_700_000_000,
      '',
      ' ',
      'USD',
      'usd',
      'USDX',
      'US',
      'EUR\n',
      'expense',
      'invoice',
      'Expense',
      '1973-03-03',
      '1973-03-04',
      '1973-03-03T09:46:40Z',
      '1973-03-03T09:46:39.999Z',
      '1973-03-03T10:46:40+01:00',
      '1973-03-03T10:46:39+01:00',
      '2024-01-31T09:30:00',
      '2024-01-31T09:30:00z',
      '2024-01-31T09:30:00.123456789Z',
      '2024-01-31T24:00:00Z',
      '2024-01-31T09:30Z',
      '2024-02-29',
      '2023-02-29',
      '2000-02-29',
      '1900-02-29',
      '2024-02-30',
      '0000-01-01',
      '9999-12-31T23:59:59-23:59',
      '+275760-09-13',
      new Date(FLOOR),
      new Date(FLOOR - 1),
      new Date(Number.NaN),
      new Date(8_640_000_000_000_000),
      // Objects that only look like a Date: their getTime throws.
      Object.create(Date.prototype),
      new Proxy(new Date(FLOOR), {}),
      null,
      undefined,
      true,
      [],
      {},
      10n,
    ),
  },
  fc.integer({ min: FLOOR - 5, max: FLOOR + 5 }),
  fc.date({ min: new Date(FLOOR - 5000), max: new Date(FLOOR + 5000), noInvalidDate: false }),
  fc.date().map((date) => (Number.isNaN(date.getTime()) ? 'x' : date.toISOString())),
  fc.date().map((date) => (Number.isNaN(date.getTime()) ? 'x' : date.toISOString().slice(0, 10))),
  fc.double(),
  fc.string({ maxLength: 6 }),
  fc.stringMatching(/^[A-Za-z]{2,4}$/),
  fc.anything(),
);

/** The numeric and time edges, for `created` and `amount`, often enough that each is met in every run. */
const createdOrAmountEdge = fc.constantFrom<unknown>(
  -0,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  FLOOR,
  FLOOR - 1,
  FLOOR + 0.5,
  8_640_000_000_000_000,
  8_640_000_000_000_001,
  Number.MAX_SAFE_INTEGER,
  new Date(FLOOR),
  new Date(FLOOR - 1),
  new Date(Number.NaN),
  '1973-03-03T09:46:39.999Z',
  '1973-03-03T09:46:40Z',
  '1973-03-03T10:46:39+01:00',
  '1973-03-03',
  '1972-12-31',
  '2024-02-29',
  '2023-02-29',
  '2024-01-31T09:30:00',
);

/** A valid value of a field, by its kind in the table, so that a field added to the table is fuzzed too. */
function validValue(field: FieldSpec): fc.Arbitrary<unknown> {
  switch (field.kind) {
    case 'time': {
      const min = Math.max(field.min, FLOOR);
      const max = Math.min(field.max, 4_102_444_800_000);
      const date = fc.date({ min: new Date(min), max: new Date(max), noInvalidDate: true });
      return fc.oneof(
        fc.integer({ min, max }),
        date,
        date.map((d) => d.toISOString()),
      );
    }
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'enum':
      return fc.constantFrom(...field.values);
    case 'text':
      if (field.format) return fc.stringMatching(field.format.pattern);
      // Any UTF-16 (lone surrogates included): the bound and the wire JSON must hold for all of it;
      // an optional field may also hold `undefined`, which is left out.
      return fc.oneof(
        fc.string({ minLength: field.minLength ?? 0 }),
        fc.string({ unit: 'binary', minLength: field.minLength ?? 0 }),
        ...(field.required ? [] : [fc.constant(undefined)]),
      );
  }
}

const validRecord = fc.record(
  Object.fromEntries(Object.entries(FINANCE_FIELDS).map(([name, field]) => [name, validValue(field)])),
  { requiredKeys: FIELD_NAMES.filter((name) => FINANCE_FIELDS[name].required) },
);

type Mutation = (record: Record<string, unknown>) => unknown;

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.tuple(fc.constantFrom(...FIELDS), edgeValue).map(
    ([field, value]): Mutation =>
      (r) => ({ ...r, [field]: value }),
  ),
  fc.constantFrom('USd', 'US1', 'uSD', 'U@D', 'U[D', 'EU', 'EURO', 'EUR ', 'ÄBC', 'ＵＳＤ').map(
    (currency): Mutation =>
      (r) => ({ ...r, currency }),
  ),
  fc.tuple(fc.constantFrom('created', 'amount'), createdOrAmountEdge).map(
    ([field, value]): Mutation =>
      (r) => ({ ...r, [field]: value }),
  ),
  fc.constantFrom(...FIELDS).map(
    (field): Mutation =>
      (r) => {
        const { [field]: _dropped, ...rest } = r;
        return rest;
      },
  ),
  fc
    .tuple(
      fc.oneof(fc.constantFrom('merchant', '__proto__', 'constructor', 'Created', 'amount '), fc.string()),
      edgeValue,
    )
    .map(
      ([key, value]): Mutation =>
        (r) => {
          const copy = { ...r };
          Object.defineProperty(copy, key, { value, enumerable: true, configurable: true, writable: true });
          return copy;
        },
    ),
  // Inherited keys: zod reads `input[key]` and checks `key in input`, and `for...in` sees them.
  fc.constantFrom(...FIELDS).map(
    (field): Mutation =>
      (r) => {
        const { [field]: value, ...rest } = r;
        return Object.assign(Object.create({ [field]: value }), rest);
      },
  ),
  fc.constant<Mutation>((r) => Object.assign(Object.create({ extra: 1 }), r)),
  fc.constant<Mutation>((r) => Object.assign(Object.create(null), r)),
  fc.constant<Mutation>((r) => Object.values(r)),
  edgeValue.map(
    (value): Mutation =>
      () =>
        value,
  ),
);

function expectSameVerdict(fastCheck: FastCheck, input: unknown): void {
  const fast = fastCheck.check(input);
  const zod = financeRecordSchema.safeParse(input);
  expect(fast !== undefined).toBe(zod.success);
  // The up-front check's scan says what the check says, and the same bound, without building the record.
  expect(fastCheck.scan(input)).toBe(fast === undefined ? undefined : fastCheck.bound(fast));
  if (fast !== undefined && zod.success) {
    // The same wire record: the same JSON, keys in the same order, the same values. zod may keep an
    // optional key that holds `undefined`, which JSON leaves out; the fast path leaves it out too.
    expect(JSON.stringify(fast)).toBe(JSON.stringify(zod.data));
    const data = zod.data as Record<string, unknown>;
    const definedKeys = Object.keys(data).filter((key) => data[key] !== undefined);
    expect(Object.keys(fast)).toEqual(definedKeys);
    for (const [key, value] of Object.entries(fast)) expect(value).toStrictEqual(data[key]);
    expect(fastCheck.bound(fast)).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify(zod.data), 'utf8'));
  }
}

/** What the publisher relies on: the check says what zod says, and its bound holds the wire size. */
function expectSoundCheck(input: unknown): void {
  const check = checkRecord(input);
  const zod = financeRecordSchema.safeParse(input);
  if (check instanceof Promise) throw new Error('zod is loaded: the check must answer at once');
  expect(check.ok).toBe(zod.success);
  if (!check.ok || !zod.success) return;
  expect(check.record).not.toBe(input);
  expect(JSON.stringify(check.record)).toBe(JSON.stringify(zod.data));
  expect(check.bound).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify(zod.data), 'utf8'));
}

describe('checkRecord (property)', () => {
  it('says valid exactly when zod does, with a new wire record and a bound of its size', () => {
    fc.assert(
      fc.property(validRecord, fc.array(mutation, { maxLength: 3 }), (record, mutations) => {
        let input: unknown = record;
        for (const mutate of mutations) {
          input = input !== null && typeof input === 'object' ? mutate(input as Record<string, unknown>) : input;
        }
        expectSoundCheck(input);
      }),
      { numRuns: 3000 },
    );
    fc.assert(fc.property(fc.anything({ withDate: true, withNullPrototype: true }), expectSoundCheck), {
      numRuns: 500,
    });
  });
});

describe.each(fastChecks)('the fast check, %s (property)', (_variant, fastCheck) => {
  it('accepts exactly the valid records, with the wire output of zod', () => {
    fc.assert(
      fc.property(validRecord, (record) => {
        expect(fastCheck.check(record)).toBeDefined();
        expectSameVerdict(fastCheck, record);
      }),
      { numRuns: 2000 },
    );
  });

  it('agrees with zod on mutated records: edge values, missing, extra, inherited and unknown keys', () => {
    fc.assert(
      fc.property(validRecord, fc.array(mutation, { minLength: 1, maxLength: 3 }), (record, mutations) => {
        let input: unknown = record;
        for (const mutate of mutations) {
          input = input !== null && typeof input === 'object' ? mutate(input as Record<string, unknown>) : input;
        }
        expectSameVerdict(fastCheck, input);
      }),
      { numRuns: 5000 },
    );
  });

  it('agrees with zod on anything at all', () => {
    fc.assert(
      fc.property(fc.anything({ withDate: true, withNullPrototype: true }), (input) =>
        expectSameVerdict(fastCheck, input),
      ),
      { numRuns: 1000 },
    );
  });
});

describe('checkRecord', () => {
  it('explains with zod the records the fast check refuses', async () => {
    const result = await checkRecord({ merchant: 'Acme' });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.issues.map((issue) => issue.path)).toContain('merchant');
  });
});
