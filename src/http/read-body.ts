/**
 * Reading response bodies with a cap. A hostile or broken service may answer with gigabytes; the
 * body is read chunk by chunk, and past the cap reading stops and the connection is dropped, so
 * memory stays bounded whatever the answer claims.
 */

/**
 * Token answers: `{access_token, token_type, expires_in, scope}`. A JWT access token is a few KB;
 * 64 KiB leaves room for any real token and nothing more.
 */
export const MAX_TOKEN_RESPONSE_BYTES = 64 * 1024;

/**
 * Data API answers (an address map, `{"success": true}`). The largest is an address map: one
 * request asks for at most ~8 KB of `filenames=` pairs, so at most ~680 names, and each gets an
 * address of at most 8 KiB (the request-line limit of common proxies, which a signed address must
 * pass): ~5.5 MiB with the names, rounded up.
 */
export const MAX_API_RESPONSE_BYTES = 8 * 1024 * 1024;

/**
 * Error answers: only the start is used (a code and a message, an XML `<Code>` and `<Message>`).
 * A longer error body is cut here, not refused: its status still decides what happens next.
 */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** What a capped read found: the bytes up to the cap, and whether more followed. */
export interface BoundedBody {
  bytes: Uint8Array<ArrayBuffer>;
  truncated: boolean;
}

/**
 * Reads at most `limit` bytes of a response body. Past the limit, the body is cancelled, which
 * makes fetch drop the connection (a half-read HTTP/1.1 response cannot be reused). Errors while
 * reading (a reset, the attempt's timeout) propagate as thrown by the stream.
 */
export async function readBounded(response: Response, limit: number): Promise<BoundedBody> {
  const body = response.body;
  if (body === null) return { bytes: new Uint8Array(0), truncated: false };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  let truncated = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (length + value.byteLength > limit) {
        chunks.push(value.subarray(0, limit - length));
        length = limit;
        truncated = true;
        break;
      }
      chunks.push(value);
      length += value.byteLength;
    }
  } finally {
    if (truncated) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { bytes, truncated };
}

/** Decodes bytes as UTF-8; a character cut at the cap becomes U+FFFD instead of an exception. */
export function decodeText(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes);
}
