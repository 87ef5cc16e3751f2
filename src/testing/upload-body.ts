/**
 * Reads a PUT body as it streams: size, SHA-256 and MD5 (the ETag) are computed chunk by chunk, and
 * the bytes are kept only while the upload budget has room. Memory stays bounded by the budget,
 * whatever the size of the upload.
 */
import { createHash } from 'node:crypto';
import type { UploadBudget } from './upload-budget.js';

export type UploadBodyResult =
  | {
      ok: true;
      size: number;
      sha256: string;
      etag: string;
      /** The bytes, reserved in the budget; undefined when they did not fit (and were dropped). */
      bytes: Uint8Array | undefined;
    }
  | { ok: false; reason: 'too-large' | 'aborted' };

export async function receiveUploadBody(
  request: Request,
  maxBytes: number,
  budget: UploadBudget,
): Promise<UploadBodyResult> {
  const sha256 = createHash('sha256');
  const md5 = createHash('md5');
  let chunks: Uint8Array[] | undefined = [];
  let size = 0;
  const dropKept = () => {
    budget.release(chunks ? size : 0);
    chunks = undefined;
  };
  const reader = request.body?.getReader();
  try {
    for (;;) {
      const next = reader ? await reader.read() : { done: true as const, value: undefined };
      if (next.done) break;
      const chunk = next.value;
      if (size + chunk.byteLength > maxBytes) {
        dropKept();
        await reader?.cancel().catch(() => undefined);
        return { ok: false, reason: 'too-large' };
      }
      sha256.update(chunk);
      md5.update(chunk);
      if (chunks && budget.tryReserve(chunk.byteLength)) chunks.push(chunk);
      else if (chunks) dropKept();
      size += chunk.byteLength;
    }
  } catch {
    // The client went away mid-body; there is nobody left to answer, but the handler must not throw.
    dropKept();
    return { ok: false, reason: 'aborted' };
  }
  return {
    ok: true,
    size,
    sha256: sha256.digest('hex'),
    etag: `"${md5.digest('hex')}"`,
    bytes: chunks ? concat(chunks, size) : undefined,
  };
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1 && chunks[0]) return chunks[0];
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
