/** UTF-8 sizes without Node's Buffer, which workers and edge runtimes do not have. */

const encoder = new TextEncoder();
/** Larger strings are encoded whole rather than kept in a scratch buffer that size. */
const MAX_SCRATCH_BYTES = 1024 * 1024;
let scratch = new Uint8Array(4096);

/**
 * The number of bytes `text` takes in UTF-8, as `TextEncoder` encodes it (an unpaired surrogate
 * becomes U+FFFD, 3 bytes). `encodeInto` a reused buffer is native in every runtime: a few times
 * slower than Node's `Buffer.byteLength`, and several times faster than counting code units in
 * JavaScript.
 */
export function utf8ByteLength(text: string): number {
  // UTF-8 needs at most 3 bytes per UTF-16 code unit.
  const most = text.length * 3;
  if (most > scratch.length) {
    if (most > MAX_SCRATCH_BYTES) return encoder.encode(text).byteLength;
    scratch = new Uint8Array(Math.max(most, scratch.length * 2));
  }
  return encoder.encodeInto(text, scratch).written;
}
