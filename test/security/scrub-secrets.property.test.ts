/**
 * The secret scrubber: every encoding the old per-character regex found is still cut, and the work
 * stays linear in the text whatever the secret. Longer runs: scrub-secrets.e2e.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { scrubSecrets, scrubSecretsCounted } from '../../src/internal/text.js';
import { assertEchoesAreCut, assertLinearWork, assertOtherTextsUnchanged } from './scrub-properties.js';

describe('the secret scrubber', () => {
  it('property: whatever the old per-character regex found is gone from the scrubbed text', () => {
    assertEchoesAreCut(150);
  });

  it('property: a text holding no encoding of the secret comes back unchanged', () => {
    assertOtherTextsUnchanged(150);
  });

  it('property: the work is linear in the text for any secret and any answer', () => {
    assertLinearWork(100, 400);
  });

  it('does linear work on a long periodic secret and an answer of its near-copies', () => {
    // A regex built from the secret re-read up to the secret's length at each position here.
    const secretText = 'ab'.repeat(2048);
    const nearCopies = `${'a\\u0062'.repeat(2047)}a#`.repeat(40);
    const plainCopies = `${'a'.repeat(4095)}#`.repeat(75);
    for (const [text, value] of [
      [nearCopies, secretText],
      [plainCopies, 'a'.repeat(4096)],
    ] as const) {
      const { steps } = scrubSecretsCounted(text, [value, encodeURIComponent(value), `x${value}`]);
      // Decoding reads each character once; each search reads each unit once and steps back at most as often.
      expect(steps).toBeLessThanOrEqual(text.length * (3 + 3 * 32));
    }
  });

  it('cuts a secret from a text without escapes, which the runtime search looks through first', () => {
    // No backslash, `%` or `+` in the text: it is looked through with String#includes before any unit search.
    const long = `${'tok-'.repeat(30_000)}end`; // 120,003 units: compiled in slices, found whole
    expect(scrubSecrets(`a ${long} b ${long}`, [long])).toBe('a [redacted] b [redacted]');
    expect(scrubSecrets('overlapping tokentokentoken here', ['tokentoken'])).toBe('overlapping [redacted] here');
    // The secret's `+` is compared as a space, as a form decoder reads it.
    expect(scrubSecrets('key is a b c.', ['a+b+c'])).toBe('key is [redacted].');
    // A lone surrogate is a unit like any other.
    expect(scrubSecrets('x\ud800secret-y', ['\ud800secret'])).toBe('x[redacted]-y');
    expect(scrubSecrets('no secret here at all', ['absent-secret', 'tokentoken'])).toBe('no secret here at all');
  });

  it('cuts an echoed secret out of a text once, however many of its forms overlap there', () => {
    const value = 'p@ss+wörd/=&secret';
    const text = `client_secret=${encodeURIComponent(value)}&x=1`;
    expect(scrubSecrets(text, [value, encodeURIComponent(value)])).toBe('client_secret=[redacted]&x=1');
  });

  it('cuts the decoded form of a secret that holds escapes, from a text shorter than the secret', () => {
    // Texts shorter than every form of a secret are not searched; a secret holding `%41` literally
    // has a decoded form shorter than itself, which a service that decoded it may echo alone.
    const value = 'ab%41cd%42ef%43gh';
    expect(scrubSecrets('abAcdBefCgh', [value])).toBe('[redacted]');
    expect(scrubSecrets('"abAcdBefCg"', [value])).toBe('"abAcdBefCg"');
    expect(scrubSecrets('abcd', ['abcde'])).toBe('abcd');
    // One unit short of the shortest form: not searched, and nothing in it to cut.
    expect(scrubSecrets('abAcdBefCg', [value])).toBe('abAcdBefCg');
    // Four UTF-8 bytes as %XX (twelve characters) read as two units: the decoded form is 8 units.
    expect(scrubSecrets('key\u{1F600}key', ['key%F0%9F%98%80key'])).toBe('[redacted]');
    expect(scrubSecrets('"key\u{1F600}key"', ['key%F0%9F%98%80key'])).toBe('"[redacted]"');
  });
});
