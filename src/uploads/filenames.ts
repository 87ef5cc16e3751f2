/** File-name rules, checked before any request so that a bad name never reaches the service. */
import { UploadError } from '../errors.js';
import { utf8ByteLength } from '../internal/utf8.js';
import { MAX_FILE_NAME_BYTES } from './limits.js';

// \p{Cc}: C0 controls, DEL and C1 controls. \p{Cs} in a /u regex matches only unpaired surrogates,
// which URLSearchParams would silently turn into U+FFFD, so the returned key would not match the name.
const CONTROL_CHARACTER = /\p{Cc}/u;
const UNPAIRED_SURROGATE = /\p{Cs}/u;

/** Returns why `name` cannot be used as an upload file name, or undefined when it can. */
export function fileNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string') return 'must be a string';
  if (name === '') return 'must not be empty';
  if (name === '.' || name === '..') return 'must not be "." or ".."';
  if (name.includes('/') || name.includes('\\')) return 'must not contain a path separator ("/" or "\\")';
  if (CONTROL_CHARACTER.test(name)) return 'must not contain control characters';
  if (UNPAIRED_SURROGATE.test(name)) return 'must be well-formed Unicode (it has an unpaired surrogate)';
  if (utf8ByteLength(name) > MAX_FILE_NAME_BYTES) return `must be at most ${MAX_FILE_NAME_BYTES} bytes of UTF-8`;
  return undefined;
}

/** Throws an `UploadError` naming the first invalid or repeated name. */
export function assertValidFileNames(names: readonly string[]): void {
  const seen = new Set<string>();
  for (const name of names) {
    const problem = fileNameProblem(name);
    if (problem !== undefined)
      throw new UploadError(String(name), `Invalid file name ${JSON.stringify(name)}: it ${problem}.`);
    // The address map is keyed by name, so two files with one name would share one address.
    if (seen.has(name))
      throw new UploadError(
        name,
        `Duplicate file name ${JSON.stringify(name)}: each file of one call needs its own name.`,
      );
    seen.add(name);
  }
}
