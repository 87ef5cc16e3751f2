/** What every kind of upload input becomes: a name, a size, and a way to stream its bytes. */
import { UploadError } from '../errors.js';
import { BodyMeter, type ChunkReader } from './body-stream.js';
import { MAX_UPLOAD_BYTES } from './limits.js';

/** One file, ready to be sent. */
export interface UploadSource {
  name: string;
  size: number;
  /** Whether `open` may be called again (for a retry or a re-signed address). False for streams. */
  reopenable: boolean;
  /**
   * A fresh stream of the content, counted and held to `size` by `meter` (a plain one by default).
   * A one-shot stream throws on the second call.
   */
  open(meter?: BodyMeter): ReadableStream<Uint8Array>;
}

/** Refuses sizes the service cannot take in one PUT. */
export function assertUploadableSize(name: string, size: number): void {
  if (size > MAX_UPLOAD_BYTES) {
    throw new UploadError(
      name,
      `File ${JSON.stringify(name)} is ${size} bytes; the limit for one upload is ${MAX_UPLOAD_BYTES} bytes (5 GiB).`,
    );
  }
}

/** The metered stream of one attempt over `reader`. */
export function bodyStream(
  name: string,
  size: number,
  meter: BodyMeter | undefined,
  reader: ChunkReader,
): ReadableStream<Uint8Array> {
  return (meter ?? new BodyMeter(name, size)).stream(reader);
}
