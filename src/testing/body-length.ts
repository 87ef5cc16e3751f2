/**
 * Whether the runtime would send a Request's body with a length or chunked. Under msw or
 * `emulator.fetch` there is no wire to look at, and the Request API shows no `Content-Length` for
 * any body (the runtime computes it when sending). Node's fetch (undici) keeps what the body was
 * made from in its request state: bytes, a string or a Blob have a length; a `ReadableStream` has
 * none, and is sent chunked unless a `Content-Length` header is set.
 *
 * Returns undefined where the runtime's Request does not say (so nothing is refused on a guess).
 */
export function bodyHasKnownLength(request: Request): boolean | undefined {
  if (request.body === null) return true;
  const state = undiciState(request);
  if (!state || typeof state !== 'object' || !('body' in state)) return undefined;
  const body = (state as { body: unknown }).body;
  if (!body || typeof body !== 'object' || !('length' in body)) return undefined;
  const { length } = body as { length: unknown };
  return typeof length === 'number';
}

function undiciState(request: Request): unknown {
  for (const symbol of Object.getOwnPropertySymbols(request)) {
    if (symbol.description === 'state') return (request as unknown as Record<symbol, unknown>)[symbol];
  }
  return undefined;
}
