import type { FastCheck, RuleKit } from './batch-source.js';
import { type FieldSpec, type FieldTable, unknownKind } from './fields.js';

/**
 * Compiles the fast check of a table of fields (batch-source.ts) into one function with
 * `new Function`, as Fastify's fast-json-stringify compiles a serializer from a schema: a check
 * that reads each field by name and builds the wire record as one object literal, as cheap as the
 * hand-written check it replaced. The source is made from the table alone, never from input:
 * names are checked to be plain identifiers and written as JSON string literals, numbers are
 * written as numbers, and every other rule is a function handed in. Its twin
 * fast-check-compiler.web.ts compiles nothing: workers and edge runtimes forbid code from strings.
 */

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

/**
 * Most optional fields for which the wire record is built by one object literal per combination of
 * present fields (2 to the power of this many literals); above it, the optional fields are assigned
 * one by one.
 */
const MOST_OPTIONAL_FOR_LITERALS = 4;

/**
 * The code that returns the wire record from variables `w0`, `w1`, … (undefined for an optional
 * field that is absent), its keys in the table's order. One object literal per combination of the
 * optional fields present: a literal's object holds all its properties in itself, where properties
 * added after the literal go to a separate array, allocated per record, that the collector then
 * copies too.
 */
function buildWireRecord(fields: [string, FieldSpec][], literal: string[], assignments: string[]): string {
  const optional = fields.flatMap(([, field], i) => (field.required ? [] : [i]));
  if (optional.length > MOST_OPTIONAL_FOR_LITERALS) {
    return `const out = { ${literal.join(', ')} };
    ${assignments.join('\n    ')}
    return out;`;
  }
  const mask = optional.map((i, bit) => `(w${i} === undefined ? 0 : ${1 << bit})`).join(' | ') || '0';
  const cases: string[] = [];
  for (let present = 0; present < 1 << optional.length; present++) {
    const keys = fields.flatMap(([name], i) => {
      const bit = optional.indexOf(i);
      return bit === -1 || present & (1 << bit) ? [`${JSON.stringify(name)}: w${i}`] : [];
    });
    cases.push(`case ${present}: return { ${keys.join(', ')} };`);
  }
  return `switch (${mask}) {
      ${cases.join('\n      ')}
    }
    return undefined;`;
}

/** The rules compiled into one function each, or undefined where the runtime forbids it. */
export function compileFastCheck(table: FieldTable, kit: RuleKit): FastCheck | undefined {
  const { refused, valueRule, sendsText, keyBytes, numberBytes } = kit;
  const fields = Object.entries(table);
  const reads: string[] = [];
  const checks: string[] = [];
  // The wire record is built in the table's order: the leading required fields in one literal
  // (one allocation, its shape known), every later field assigned after them, in turn.
  const literal: string[] = [];
  const assignments: string[] = [];
  let fixedBound = kit.braces;
  // The bound's terms, of the wire record's fields (`bound`) and of the checked values (`scan`).
  const boundParts: string[] = [];
  const scanParts: string[] = [];
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
      fixedBound += keyBytes(name) + (text ? 2 : numberBytes);
      if (text) {
        boundParts.push(`6 * record[${key}].length`);
        scanParts.push(`6 * ${w}.length`);
      }
    } else {
      assignments.push(`if (${w} !== undefined) out[${key}] = ${w};`);
      const size = (value: string) => (text ? `2 + 6 * ${value}.length` : `${numberBytes}`);
      boundParts.push(`((value = record[${key}]) === undefined ? 0 : ${keyBytes(name)} + ${size('value')})`);
      scanParts.push(`(${w} === undefined ? 0 : ${keyBytes(name)} + ${size(w)})`);
    }
  }
  const cases = fields.map(([name]) => `case ${JSON.stringify(name)}:`).join(' ');
  const build = buildWireRecord(fields, literal, assignments);
  // The checks, written twice: `check` builds the wire record, `scan` only adds up its bound.
  const checked = `if (typeof input !== "object" || input === null || Array.isArray(input)) return undefined;
    for (const key in input) {
      switch (key) { ${cases} break; default: return undefined; }
    }
    ${reads.join('\n    ')}
    ${checks.join('\n    ')}`;
  const source = `"use strict";
return {
  check(input) {
    ${checked}
    ${build}
  },
  scan(input) {
    ${checked}
    return ${[String(fixedBound), ...scanParts].join(' + ')};
  },
  bound(record) {
    let value;
    return ${[String(fixedBound), ...boundParts].join(' + ')};
  },
};`;
  try {
    return new Function('REFUSED', 'rules', source)(refused, rules) as FastCheck;
  } catch (error) {
    // A runtime that forbids code from strings says so with an EvalError; anything else is a bug here.
    if (error instanceof EvalError) return undefined;
    throw error;
  }
}
