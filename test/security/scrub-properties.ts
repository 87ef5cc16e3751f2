/**
 * Properties of the secret scrubber, run briefly in the fast lane and at length in the end-to-end
 * lane. The oracle is the per-character regex the scrubber replaced, which found every mix of
 * encodings but backtracked: whatever it matched must be gone from the scrubbed text.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { scrubSecrets, scrubSecretsCounted } from '../../src/internal/text.js';
import { FUZZ_SEED } from '../fuzz/arbitraries.js';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

function hexPattern(value: number, width: number): string {
  return [...value.toString(16).padStart(width, '0')]
    .map((digit) => (/[a-f]/.test(digit) ? `[${digit}${digit.toUpperCase()}]` : digit))
    .join('');
}

const SHORT: Record<string, string> = {
  '"': '\\\\"',
  '\\': '\\\\\\\\',
  '/': '\\\\/',
  '\b': '\\\\b',
  '\f': '\\\\f',
  '\n': '\\\\n',
  '\r': '\\\\r',
  '\t': '\\\\t',
};

/** The oracle: one alternation per character of the secret, every encoding of it. */
function oracle(secret: string): RegExp {
  const chars = Array.from(secret, (char) => {
    const options = [escapeRegExp(char)];
    if (SHORT[char] !== undefined) options.push(SHORT[char]);
    const units = [];
    for (let i = 0; i < char.length; i++) units.push(`\\\\[uU]${hexPattern(char.charCodeAt(i), 4)}`);
    options.push(units.join(''));
    options.push(Array.from(new TextEncoder().encode(char), (byte) => `%${hexPattern(byte, 2)}`).join(''));
    if (char === ' ') options.push('\\+');
    return `(?:${options.join('|')})`;
  });
  return new RegExp(chars.join(''));
}

/** Each encoding the oracle knows for one character. */
function encodings(char: string): string[] {
  const units = Array.from({ length: char.length }, (_, i) => char.charCodeAt(i).toString(16).padStart(4, '0'));
  const bytes = Array.from(new TextEncoder().encode(char), (byte) => byte.toString(16).padStart(2, '0'));
  const out = [
    char,
    units.map((unit) => `\\u${unit}`).join(''),
    units.map((unit) => `\\U${unit.toUpperCase()}`).join(''),
    bytes.map((byte) => `%${byte}`).join(''),
    bytes.map((byte) => `%${byte.toUpperCase()}`).join(''),
  ];
  const short = SHORT[char];
  if (short !== undefined) out.push(short.replace(/\\\\/g, '\\'));
  if (char === ' ') out.push('+');
  return out;
}

/** Secrets drawn from characters every encoding changes, and plain ones. */
const secretChar = fc.constantFrom(...'aZ09-_./+=% &"\\é€😀~:'.split(/(?:)/u));
const secret = fc.array(secretChar, { minLength: 4, maxLength: 24 }).map((chars) => chars.join(''));

/** The secret written with each character encoded its own way. */
function echoOf(value: string): fc.Arbitrary<string> {
  return fc.tuple(...Array.from(value, (char) => fc.constantFrom(...encodings(char)))).map((parts) => parts.join(''));
}

/** Text around the echo: ordinary words, and stray escape characters. */
const filler = fc.array(fc.constantFrom('x', ' ', 'Bearer ', '"', '=', ':', '{', '}', '%', '%4', '\\\\', '+', 'é'), {
  maxLength: 6,
});

/** Whatever the old per-character regex found is gone from the scrubbed text. */
export function assertEchoesAreCut(numRuns: number): void {
  fc.assert(
    fc.property(
      secret.chain((value) => fc.tuple(fc.constant(value), echoOf(value), filler, filler, echoOf(value))),
      ([value, echo, before, after, again]) => {
        // No separators: stray escape characters glue onto the echo's first and last characters.
        const text = `${before.join('')}${echo}${after.join('')}${again}`;
        const scrubbed = scrubSecrets(text, [value]);
        expect(oracle(value).test(scrubbed)).toBe(false);
        expect(scrubbed).toContain('[redacted]');
      },
    ),
    { numRuns, seed: FUZZ_SEED },
  );
}

/** A text holding no encoding of the secret comes back unchanged. */
export function assertOtherTextsUnchanged(numRuns: number): void {
  fc.assert(
    fc.property(secret, fc.string({ unit: 'binary', maxLength: 80 }), (value, text) => {
      fc.pre(!oracle(value).test(text) && !oracle(value.replace(/\+/g, ' ')).test(text));
      expect(scrubSecrets(text, [value])).toBe(text);
    }),
    { numRuns, seed: FUZZ_SEED },
  );
}

/** The work is linear in the text for any secret and any answer. */
export function assertLinearWork(numRuns: number, maxLength: number): void {
  fc.assert(
    fc.property(
      fc.array(secret, { minLength: 1, maxLength: 3 }),
      fc.string({ unit: fc.constantFrom('a', 'b', '%', '\\', 'u', '0', '6', '1', '+', ' '), maxLength }),
      (secrets, text) => {
        const { steps } = scrubSecretsCounted(text, secrets);
        // Per secret, in each of three readings: two patterns searched both ways (five steps a unit); and the raw text.
        expect(steps).toBeLessThanOrEqual(text.length * (3 + secrets.length * 32));
      },
    ),
    { numRuns, seed: FUZZ_SEED },
  );
}
