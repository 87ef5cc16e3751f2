/**
 * The PUT body of one attempt, in the shape that makes the runtime itself send Content-Length:
 * storage hosts refuse a chunked PUT (411/501), and some runtimes drop a Content-Length header
 * set by hand on a stream body (Deno and workerd send it chunked). Whatever the shape, the bytes
 * come from the attempt's metered stream, so progress, the stall timeout and the size checks work
 * the same everywhere.
 */
import type { RequestBody } from '../http/types.js';

/**
 * A Blob that has no bytes of its own: its size is the declared one, and its content is the
 * stream it is given. Runtimes that implement fetch's body extraction in JavaScript (Node's
 * undici, Deno, edge-runtime) take a Blob body's length from `size` and its bytes from `stream()`,
 * so the body keeps a known length while being read chunk by chunk from disk or memory.
 */
class StreamedBlob extends Blob {
  readonly #size: number;
  readonly #stream: ReadableStream<Uint8Array>;

  constructor(size: number, stream: ReadableStream<Uint8Array>) {
    super([]);
    this.#size = size;
    this.#stream = stream;
  }

  override get size(): number {
    return this.#size;
  }

  override stream(): ReadableStream<Uint8Array<ArrayBuffer>> {
    // One attempt, one read: a second reader gets the stream's "locked" error.
    return this.#stream as ReadableStream<Uint8Array<ArrayBuffer>>;
  }

  override arrayBuffer(): Promise<ArrayBuffer> {
    return new Response(this.stream()).arrayBuffer();
  }

  override text(): Promise<string> {
    return new Response(this.stream()).text();
  }

  override slice(): Blob {
    throw new TypeError('An upload body cannot be sliced');
  }
}

let blobsReadThroughStream: boolean | undefined;

/**
 * Whether this runtime reads a Blob body through its `stream()` method, tried once on a Request
 * (which extracts its body as fetch does). Bun and workerd read a Blob's own bytes natively, so a
 * StreamedBlob would go out empty there.
 */
function readsBlobsThroughStream(): boolean {
  if (blobsReadThroughStream === undefined) {
    let called = false;
    class Probe extends Blob {
      override stream(): ReadableStream<Uint8Array<ArrayBuffer>> {
        called = true;
        return super.stream();
      }
    }
    try {
      new Request('http://probe.invalid/', { method: 'PUT', body: new Probe(['x']) });
    } catch {
      // A runtime that refuses the probe is not one that reads through stream().
    }
    blobsReadThroughStream = called;
  }
  return blobsReadThroughStream;
}

/**
 * Whether an upload's PUT sets Content-Length by hand. Everywhere, the body is shaped so that the
 * runtime sends it (`sizedBody`), and the header is set as well so that msw handlers see it, except
 * on Node 20 and 22 with a Blob body: their fetch adds its own Content-Length to one set by hand,
 * which the npm undici's dispatcher (installed by any process that imports undici before its
 * first fetch, for a proxy say) refuses as invalid, failing every upload (Node 24's does not).
 * There, msw handlers see no Content-Length header; the emulator judges the body's length as the
 * runtime would send it.
 */
export function putSetsContentLength(): boolean {
  if (!readsBlobsThroughStream()) return true;
  const node = (globalThis as { process?: { versions?: { node?: string; bun?: string; deno?: string } } }).process
    ?.versions;
  if (node?.node === undefined || node.bun !== undefined || node.deno !== undefined) return true;
  return Number(node.node.split('.')[0]) >= 24;
}

/** workerd's stream that declares its length, so that a stream body is sent with Content-Length. */
type FixedLengthStreamConstructor = new (length: number) => TransformStream<Uint8Array, Uint8Array>;

/**
 * The body for the `size` bytes of `stream`:
 * - a StreamedBlob where Blob bodies are read through `stream()` (Node, Deno, edge-runtime);
 * - the stream through workerd's `FixedLengthStream` where it exists (Cloudflare Workers);
 * - else the stream itself, with the Content-Length header the caller sets (Bun keeps it).
 */
export function sizedBody(size: number, stream: ReadableStream<Uint8Array>): RequestBody {
  if (readsBlobsThroughStream()) return new StreamedBlob(size, stream);
  const FixedLengthStream = (globalThis as { FixedLengthStream?: FixedLengthStreamConstructor }).FixedLengthStream;
  if (FixedLengthStream !== undefined) return stream.pipeThrough(new FixedLengthStream(size));
  return stream;
}
