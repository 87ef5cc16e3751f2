/** The secret scrubber's properties at length: thousands of echoes, and answers of tens of KiB. */
import { describe, it } from 'vitest';
import { assertEchoesAreCut, assertLinearWork, assertOtherTextsUnchanged } from './scrub-properties.js';

describe('the secret scrubber, long runs', () => {
  it('property: whatever the old per-character regex found is gone from the scrubbed text', () => {
    assertEchoesAreCut(5_000);
  }, 300_000);

  it('property: a text holding no encoding of the secret comes back unchanged', () => {
    assertOtherTextsUnchanged(5_000);
  }, 300_000);

  it('property: the work is linear in the text for any secret and any answer', () => {
    assertLinearWork(300, 50_000);
  }, 300_000);
});
