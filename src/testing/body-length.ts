/**
 * How the runtime would send a Request's body: with a length, or chunked. Under msw or
 * `emulator.fetch` there is no wire to look at, and the Request API shows no `Content-Length` for
 * any body (the runtime computes it when sending). Node's fetch (undici) and Deno keep what the
 * body was made from in the request's internal state: bytes, a string or a Blob are its `source`;
 * a `ReadableStream` has none. Node sends a stream chunked unless a `Content-Length` header is set;
 * Deno drops that header on a stream and always sends it chunked.
 */

/** True when the body was a ReadableStream; undefined where the runtime's Request does not say. */
export function bodyIsStream(request: Request): boolean | undefined {
  if (request.body === null) return false;
  for (const symbol of Object.getOwnPropertySymbols(request)) {
    const state: unknown = (request as unknown as Record<symbol, unknown>)[symbol];
    if (!state || typeof state !== 'object' || !('body' in state)) continue;
    const body: unknown = state.body;
    if (body && typeof body === 'object' && 'source' in body) return body.source === null;
  }
  return undefined;
}

/**
 * The Content-Length the runtime would send for a body of known length (bytes, a string, a Blob),
 * where the Request does not show it as a header; undefined for a stream, or where the runtime's
 * Request does not say.
 */
export function bodyLengthOf(request: Request): number | undefined {
  if (request.body === null) return undefined;
  for (const symbol of Object.getOwnPropertySymbols(request)) {
    const state: unknown = (request as unknown as Record<symbol, unknown>)[symbol];
    if (!state || typeof state !== 'object' || !('body' in state)) continue;
    const body: unknown = state.body;
    if (!body || typeof body !== 'object' || !('source' in body) || body.source === null) return undefined;
    return 'length' in body && typeof body.length === 'number' && Number.isSafeInteger(body.length)
      ? body.length
      : undefined;
  }
  return undefined;
}

/** Whether the runtime sends a stream body chunked even with a `Content-Length` header (Deno). */
export function streamsAlwaysChunked(): boolean {
  return 'Deno' in globalThis;
}
