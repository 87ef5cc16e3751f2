/** Recorders that watch a client from outside: its log lines and the requests it sends. */
import type { FetchLike, Logger } from 'push-api-client';

export interface LogLine {
  level: string;
  message: string;
  fields?: Record<string, unknown>;
}

/** A logger that keeps every line, for assertions and secret scans. */
export function recordingLogger(): Logger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) => {
    lines.push({ level, message, fields });
  };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export interface SeenRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** Wraps a fetch (the emulator's) and keeps a copy of each request, body included. */
export function capturingFetch(inner: FetchLike): { fetch: FetchLike; seen: SeenRequest[] } {
  const seen: SeenRequest[] = [];
  const fetch: FetchLike = async (input, init) => {
    const request = new Request(input, init);
    const headers: Record<string, string> = {};
    request.headers.forEach((value, key) => {
      headers[key] = value;
    });
    seen.push({ method: request.method, url: request.url, headers, body: await request.clone().text() });
    return inner(request);
  };
  return { fetch, seen };
}

/** Wraps a fetch and keeps the UTF-8 byte length of each finance request body. */
export function financeBodySizes(inner: FetchLike): { fetch: FetchLike; sizes: number[] } {
  const sizes: number[] = [];
  const fetch: FetchLike = async (input, init) => {
    const request = new Request(input, init);
    if (request.method === 'POST' && request.url.endsWith('/finance')) {
      sizes.push((await request.clone().arrayBuffer()).byteLength);
    }
    return inner(request);
  };
  return { fetch, sizes };
}

/** The error `promise` rejects with; a promise that resolves fails the test. */
export async function rejectionOf(promise: PromiseLike<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}
