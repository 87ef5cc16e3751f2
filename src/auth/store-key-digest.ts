/**
 * The SHA-256 of a token store key's material, as hex. Node, Bun and Deno hash at once
 * (`node:crypto`), so a cold process's first token request leaves without waiting for an event
 * loop turn; the build for workers and edge runtimes uses WebCrypto (its twin).
 */
import { createHash } from 'node:crypto';

export function sha256Hex(material: string): string | Promise<string> {
  return createHash('sha256').update(material, 'utf8').digest('hex');
}
