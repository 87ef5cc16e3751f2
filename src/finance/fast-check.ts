import {
  dateMs,
  FINANCE_FIELDS,
  type FieldSpec,
  type FieldTable,
  type FinanceRecord,
  isIsoDateOrDateTime,
  type TimeField,
  unknownKind,
} from './fields.js';

/**
 * The common case of the zod schema's `safeParse`, without zod, derived from the same table of
 * fields (fields.ts): the same rules, the same wire output, several times cheaper. It only ever
 * says "valid, here is the wire record" or "ask zod": every record it does not accept goes through
 * zod, which stays the source of truth and of every message. A zod parse costs about as much as
 * sending the record; publishing millions of records would then be limited by validation.
 *
 * Rules, as zod applies them to a strict object of the table's fields (a property test checks
 * that both agree on valid and mutated records): the input is a non-array object; each field is
 * read once with `input[name]`, in the table's order, so inherited ones count; every other key
 * that `for...in` yields is unknown; an optional field that is absent or `undefined` is left out
 * of the wire record; the wire record has the fields in the table's order, so that its JSON is
 * zod's output. The wire record is a new plain object: a getter or a Proxy that answers
 * differently on each read cannot show the check one value and the request another.
 *
 * The check runs once per record, so it is compiled from the table into one function with
 * `new Function` (no loop over the fields, no property written by a computed name: a generic loop
 * cost several times the whole check). Where a runtime forbids compiling code from strings (a
 * Worker, `--disallow-code-generation-from-strings`), the same rules run from the table directly.
 * The source compiled is made from the table alone, never from input: names are checked to be
 * plain identifiers and written as JSON string literals, and rules are passed in as functions.
 */

/** A record's check and the bound of its JSON size. */
export interface FastCheck {
  /** The wire record when `input` is valid; `undefined` means "not certain: let zod decide and explain". */
  check(input: unknown): FinanceRecord | undefined;
  /** At least the UTF-8 size of `JSON.stringify(record)`, for a wire record (one the check made). */
  bound(record: FinanceRecord): number;
}

/** A field's rule says this: not certain, let zod decide and explain. */
const REFUSED: unique symbol = Symbol('refused');
type Refused = typeof REFUSED;

function timeMs(field: TimeField, value: unknown): number | Refused {
  if (typeof value === 'number') {
    return Number.isSafeInteger(value) && value >= field.min && value <= field.max ? value : REFUSED;
  }
  if (typeof value === 'string') {
    if (!isIsoDateOrDateTime(value)) return REFUSED;
    const ms = Date.parse(value);
    // NaN passes, as in the schema (`ms < min` is false); the patterns leave no such string today.
    return ms < field.min ? REFUSED : ms;
  }
  if (value instanceof Date) {
    const ms = dateMs(value);
    return ms === undefined || Number.isNaN(ms) || ms < field.min ? REFUSED : ms;
  }
  return REFUSED;
}

/** A present value's wire form, or {@link REFUSED}. */
type ValueRule = (value: unknown) => unknown;

function valueRule(field: FieldSpec): ValueRule {
  switch (field.kind) {
    case 'time':
      return (value) => timeMs(field, value);
    case 'number':
      return (value) => (typeof value === 'number' && Number.isFinite(value) ? value : REFUSED);
    case 'enum': {
      const values: readonly unknown[] = field.values;
      return (value) => (values.includes(value) ? value : REFUSED);
    }
    case 'text': {
      const minLength = field.minLength ?? 0;
      const format = field.format?.test;
      return (value) =>
        typeof value === 'string' && value.length >= minLength && (format === undefined || format(value))
          ? value
          : REFUSED;
    }
    default:
      return unknownKind(field);
  }
}

/** Whether a field's wire value is a JSON string (else a number). */
function sendsText(field: FieldSpec): boolean {
  return field.kind === 'text' || field.kind === 'enum';
}

/*
 * The bound of a record's JSON size, without serializing it: batches far under `maxBatchBytes`
 * are filled from it, and only records near the limit are serialized and measured (batcher.ts).
 * Each part is the most JSON can take:
 * - a string of n UTF-16 code units: `\uXXXX` escapes, 6 bytes per unit, plus 2 quotes;
 * - a finite number: 25 characters (`-2.2250738585072014e-308` is 24);
 * - a field's name with its quotes, colon and comma;
 * - the braces: 2.
 */
const NUMBER_BYTES = 25;
const BRACES = 2;
const keyBytes = (name: string): number => JSON.stringify(name).length + 2;

const isRecordObject = (input: unknown): input is Record<string, unknown> =>
  typeof input === 'object' && input !== null && !Array.isArray(input);

/** The rules run from the table: the reference, and the check where code cannot be compiled. */
export function interpretedFastCheck(table: FieldTable = FINANCE_FIELDS): FastCheck {
  const fields = Object.values(table);
  const names = Object.keys(table);
  const required = fields.map((field) => field.required);
  const rules = fields.map((field) => valueRule(field));
  const count = names.length;
  const isName = (key: string): boolean => {
    for (let i = 0; i < count; i++) if (names[i] === key) return true;
    return false;
  };
  return {
    check(input) {
      if (!isRecordObject(input)) return undefined;
      for (const key in input) if (!isName(key)) return undefined;
      const out: Record<string, unknown> = {};
      for (let i = 0; i < count; i++) {
        const name = names[i] as string;
        const value = input[name];
        if (value === undefined) {
          if (required[i]) return undefined;
          continue;
        }
        const wire = (rules[i] as ValueRule)(value);
        if (wire === REFUSED) return undefined;
        out[name] = wire;
      }
      return out as FinanceRecord;
    },
    bound(record) {
      const values = record as Record<string, unknown>;
      let bound = BRACES;
      for (const name of names) {
        const value = values[name];
        if (value === undefined) continue;
        bound += keyBytes(name) + (typeof value === 'string' ? 6 * value.length + 2 : NUMBER_BYTES);
      }
      return bound;
    },
  };
}

/** The code that refuses variable `v` holding a present value of `field`, or undefined when a rule function must. */
function inlineRefusal(field: FieldSpec, v: string, rule: string): string | undefined {
  switch (field.kind) {
    case 'number':
      return `typeof ${v} !== "number" || !Number.isFinite(${v})`;
    case 'enum':
      return field.values.map((value) => `${v} !== ${JSON.stringify(value)}`).join(' && ');
    case 'text': {
      const parts = [`typeof ${v} !== "string"`];
      if (field.minLength !== undefined) parts.push(`${v}.length < ${Number(field.minLength)}`);
      if (field.format) parts.push(`!${rule}.test(${v})`);
      return parts.join(' || ');
    }
    case 'time':
      return undefined;
    default:
      return unknownKind(field);
  }
}

/** The rules compiled into one function each, or undefined where the runtime forbids it. */
export function compiledFastCheck(table: FieldTable = FINANCE_FIELDS): FastCheck | undefined {
  const fields = Object.entries(table);
  const reads: string[] = [];
  const checks: string[] = [];
  // The wire record is built in the table's order: the leading required fields in one literal
  // (one allocation, its shape known), every later field assigned after them, in turn.
  const literal: string[] = [];
  const assignments: string[] = [];
  let fixedBound = BRACES;
  const boundParts: string[] = [];
  const rules: unknown[] = [];
  for (const [i, [name, field]] of fields.entries()) {
    // Names come from our own table; anything but a plain identifier would be a mistake in it.
    if (!/^[A-Za-z_$][\w$]*$/.test(name) || name === '__proto__') throw new Error(`bad field name ${name}`);
    const key = JSON.stringify(name);
    const v = `v${i}`;
    const w = `w${i}`;
    const rule = `rules[${i}]`;
    reads.push(`const ${v} = input[${key}];`);
    const refusal = inlineRefusal(field, v, rule);
    if (refusal === undefined) {
      rules[i] = valueRule(field);
      const convert = `${w} = ${rule}(${v}); if (${w} === REFUSED) return undefined;`;
      checks.push(field.required ? `let ${convert}` : `let ${w}; if (${v} !== undefined) { ${convert} }`);
    } else {
      rules[i] = field.kind === 'text' ? field.format : undefined;
      checks.push(
        field.required
          ? `if (${refusal}) return undefined;`
          : `if (${v} !== undefined && (${refusal})) return undefined;`,
      );
      checks.push(`const ${w} = ${v};`);
    }
    const text = sendsText(field);
    if (field.required) {
      if (assignments.length === 0) literal.push(`${key}: ${w}`);
      else assignments.push(`out[${key}] = ${w};`);
      fixedBound += keyBytes(name) + (text ? 2 : NUMBER_BYTES);
      if (text) boundParts.push(`6 * record[${key}].length`);
    } else {
      assignments.push(`if (${w} !== undefined) out[${key}] = ${w};`);
      const size = text ? `2 + 6 * value.length` : `${NUMBER_BYTES}`;
      boundParts.push(`((value = record[${key}]) === undefined ? 0 : ${keyBytes(name)} + ${size})`);
    }
  }
  const cases = fields.map(([name]) => `case ${JSON.stringify(name)}:`).join(' ');
  const source = `"use strict";
return {
  check(input) {
    if (typeof input !== "object" || input === null || Array.isArray(input)) return undefined;
    for (const key in input) {
      switch (key) { ${cases} break; default: return undefined; }
    }
    ${reads.join('\n    ')}
    ${checks.join('\n    ')}
    const out = { ${literal.join(', ')} };
    ${assignments.join('\n    ')}
    return out;
  },
  bound(record) {
    let value;
    return ${[String(fixedBound), ...boundParts].join(' + ')};
  },
};`;
  try {
    return new Function('REFUSED', 'rules', source)(REFUSED, rules) as FastCheck;
  } catch (error) {
    // A runtime that forbids code from strings says so with an EvalError; anything else is a bug here.
    if (error instanceof EvalError) return undefined;
    throw error;
  }
}

const fastCheck = compiledFastCheck() ?? interpretedFastCheck();

/** See {@link FastCheck.check}. */
export const checkFast = fastCheck.check;
/** See {@link FastCheck.bound}. */
export const recordJsonBound = fastCheck.bound;
