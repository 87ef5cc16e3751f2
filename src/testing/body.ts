/**
 * Reads a request body with a byte cap enforced while reading, so a huge body is refused after
 * `maxBytes` bytes instead of being buffered whole.
 */

export type BodyReadResult = { ok: true; bytes: Uint8Array } | { ok: false; reason: 'too-large' | 'aborted' };

export async function readBodyWithLimit(request: Request, maxBytes: number): Promise<BodyReadResult> {
  const body = request.body;
  if (!body) return { ok: true, bytes: new Uint8Array(0) };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => undefined);
        return { ok: false, reason: 'too-large' };
      }
      chunks.push(value);
    }
  } catch {
    // The client went away mid-body; there is nobody left to answer, but the handler must not throw.
    return { ok: false, reason: 'aborted' };
  }
  if (chunks.length === 1 && chunks[0]) return { ok: true, bytes: chunks[0] };
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { ok: true, bytes };
}

/** Parses a `Content-Length` value; undefined for absent, NaN for malformed. */
export function parseContentLength(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined) return undefined;
  return /^\d+$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
}
