/**
 * The upload-address operation (spec, operation 2): the file names checked before any request,
 * the URLs that ask for their addresses, and the answer checked address by address.
 */
import { appResourceUrl } from '../app-path.js';
import { PushError, UploadError } from '../errors.js';
import { assertSecureUrl, closerThanService } from '../http/address-rules.js';
import { truncateText } from '../internal/redact.js';
import { utf8ByteLength } from '../internal/utf8.js';
import { MAX_FILE_NAME_BYTES, MAX_UPLOAD_URLS_URL_LENGTH } from './limits.js';
import type { UploadFileType } from './types.js';

/** `{base_url}/services/push/v1/customer/apps/{appId}/upload`; the app id is checked and encoded once, in app-path.ts. */
export function uploadUrlsEndpoint(baseUrl: URL, appId: string): URL {
  return appResourceUrl(baseUrl, appId, 'upload');
}

function encodedParam(key: string, value: string): string {
  return new URLSearchParams([[key, value]]).toString();
}

/** Characters `application/x-www-form-urlencoded` leaves as they are: ASCII letters, digits, `*-._`. */
function isFormSafe(unit: number): boolean {
  return (
    (unit >= 0x61 && unit <= 0x7a) ||
    (unit >= 0x41 && unit <= 0x5a) ||
    (unit >= 0x30 && unit <= 0x39) ||
    unit === 0x2a ||
    unit === 0x2d ||
    unit === 0x2e ||
    unit === 0x5f
  );
}

/**
 * The length of `text` as URLSearchParams writes it, counted without building it (this runs once
 * per file): a safe character or a space ("+") is one character; any other is `%XX` per UTF-8 byte,
 * an unpaired surrogate being written as U+FFFD (three bytes).
 */
export function formEncodedLength(text: string): number {
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit === 0x20 || isFormSafe(unit)) length += 1;
    else if (unit < 0x80) length += 3;
    else if (unit < 0x800) length += 6;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        length += 12;
        i++;
      } else length += 9;
    } else length += 9;
  }
  return length;
}

/** The length of `filenames=<name>` in a query string. */
function filenamePairLength(name: string): number {
  return 'filenames='.length + formEncodedLength(name);
}

/**
 * The room in one upload-address request URL, filled name by name: each URL stays shorter than
 * `maxLength`, because proxies commonly refuse longer request lines. Names go in as repeated
 * `filenames=` parameters (never `filenames[]`), after the type parameter when there is one.
 */
export class AddressRequestRoom {
  readonly #baseLength: number;
  readonly #maxLength: number;
  #length: number;
  #names = 0;

  constructor(endpoint: URL, type: UploadFileType | undefined, maxLength: number = MAX_UPLOAD_URLS_URL_LENGTH) {
    const fixed = new URL(endpoint.href);
    fixed.search = '';
    fixed.hash = '';
    // "?" plus the type parameter and its "&" are part of every request.
    this.#baseLength = fixed.href.length + 1 + (type === undefined ? 0 : encodedParam('type', type).length + 1);
    this.#maxLength = maxLength;
    this.#length = this.#baseLength;
  }

  /** Whether `name` could go in a request of its own. */
  fitsAlone(name: string): boolean {
    return this.#baseLength + filenamePairLength(name) < this.#maxLength;
  }

  /**
   * Adds `name` when it fits beside the names already in. An empty room takes any name (one that
   * does not fit alone fails when its request is built, naming it), so every name finds a request.
   */
  tryAdd(name: string): { added: true } | { added: false; reason: 'full' } {
    const pairLength = filenamePairLength(name);
    const length = this.#length + (this.#names > 0 ? 1 : 0) + pairLength;
    if (this.#names > 0 && length >= this.#maxLength) return { added: false, reason: 'full' };
    this.#length = length;
    this.#names += 1;
    return { added: true };
  }

  /** Empties the room for the next request. */
  clear(): void {
    this.#length = this.#baseLength;
    this.#names = 0;
  }
}

/** Splits the names over as few request URLs as possible, each under `maxLength` (see {@link AddressRequestRoom}). */
export function uploadUrlsRequests(
  endpoint: URL,
  names: readonly string[],
  type?: UploadFileType,
  maxLength: number = MAX_UPLOAD_URLS_URL_LENGTH,
): URL[] {
  const fixed = new URL(endpoint.href);
  fixed.search = '';
  fixed.hash = '';
  const room = new AddressRequestRoom(fixed, type, maxLength);
  const urls: URL[] = [];
  let group: string[] = [];
  const flush = () => {
    const url = new URL(fixed.href);
    const params = new URLSearchParams();
    for (const name of group) params.append('filenames', name);
    if (type !== undefined) params.append('type', type);
    url.search = params.toString();
    urls.push(url);
    group = [];
    room.clear();
  };
  for (const name of names) {
    if (!room.fitsAlone(name)) {
      throw new UploadError(name, `File name ${JSON.stringify(name)} is too long to fit in an upload-address request.`);
    }
    if (!room.tryAdd(name).added) {
      flush();
      room.tryAdd(name);
    }
    group.push(name);
  }
  if (group.length > 0) flush();
  return urls;
}

/** What a signed address is checked against: the transport's http rule and where the service itself is. */
export interface AddressRules {
  allowInsecureHttp: boolean;
  /** The configured `baseUrl`: the service that hands out the addresses. */
  service: URL;
}

/**
 * Why a signed address is refused, or undefined. A file goes no closer to this machine than the
 * service that handed out its address (address-rules.ts). Credentials in the address are refused:
 * a signed address carries its authorization in the query, and `user:pass@` would be sent as Basic auth.
 */
function addressProblem(url: URL, rules: AddressRules): string | undefined {
  if (url.username !== '' || url.password !== '') return 'carries credentials (user:password@)';
  return closerThanService(url, rules.service);
}

/**
 * Checks the answer: a JSON object with exactly one absolute http(s) URL per requested name, each
 * passing the https-only rule and the network rule (no loopback or private-network address from a
 * service that is not there itself), because a file must never go to an address we did not ask for.
 */
export function parseUploadUrlMap(
  body: unknown,
  requested: readonly string[],
  rules: AddressRules,
): Record<string, string> {
  const { allowInsecureHttp } = rules;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new PushError('The upload-address response is not a JSON object mapping file names to addresses.');
  }
  const map = body as Record<string, unknown>;
  const wanted = new Set(requested);
  const extra: string[] = [];
  let firstExtra: string | undefined;
  let extraCount = 0;
  for (const key in map) {
    if (!Object.hasOwn(map, key) || wanted.has(key)) continue;
    // A hostile answer may name a million files, each a megabyte long: a few, cut short, are quoted.
    firstExtra ??= key;
    if (extra.length < 3) extra.push(JSON.stringify(truncateText(key, 60)));
    extraCount++;
  }
  if (extraCount > 0) {
    const more = extraCount > extra.length ? ` and ${extraCount - extra.length} more` : '';
    throw new UploadError(
      truncateText(firstExtra ?? '', 200),
      `The upload-address response has addresses for names that were not requested: ${extra.join(', ')}${more}.`,
    );
  }
  const out: Record<string, string> = {};
  for (const name of requested) {
    const value = Object.hasOwn(map, name) ? map[name] : undefined;
    if (value === undefined)
      throw new UploadError(name, `The upload-address response has no address for ${JSON.stringify(name)}.`);
    if (typeof value !== 'string')
      throw new UploadError(name, `The upload address for ${JSON.stringify(name)} is not a string.`);
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new UploadError(name, `The upload address for ${JSON.stringify(name)} is not an absolute URL.`);
    }
    try {
      assertSecureUrl(url, `signed upload address for ${JSON.stringify(name)}`, allowInsecureHttp);
    } catch (error) {
      throw new UploadError(name, error instanceof Error ? error.message : String(error), { cause: error });
    }
    const problem = addressProblem(url, rules);
    if (problem !== undefined) {
      throw new UploadError(name, `The upload address for ${JSON.stringify(name)} ${problem}; it is not used.`);
    }
    // defineProperty: `out["__proto__"] = value` would set the prototype instead of adding the name.
    Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

// File-name rules, checked before any request so that a bad name never reaches the service.

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
