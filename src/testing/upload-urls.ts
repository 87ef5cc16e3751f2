/**
 * `GET {base_url}/services/push/v1/customer/apps/{appId}/upload`: one signed address per file.
 *
 * Decisions where the spec is silent:
 * - Only `filenames` and `type` are known parameters; anything else, including the
 *   `filenames[]=` array spelling, is a 400 ("unexpected query parameter").
 * - A file name asked for twice is a 400: the answer is a map keyed by name, so the second file
 *   would silently overwrite the first at the storage host.
 * - An empty name or one over 1024 UTF-8 bytes (the object-store key limit) is a 400.
 * - `.` and `..` are a 400: a URL parser folds such a path segment away (`%2E%2E` too), so no
 *   address could name the file; the one handed out pointed at the storage root and was refused.
 */
import type { EmulatorContext, IncomingRequest } from './context.js';
import { apiError, jsonResponse } from './responses.js';

const FILE_TYPES = new Set(['users', 'contracts', 'other']);
const KNOWN_PARAMS = new Set(['filenames', 'type']);
const MAX_NAME_BYTES = 1024;

export function handleUploadUrls(context: EmulatorContext, incoming: IncomingRequest, appId: string): Response {
  const params = incoming.url.searchParams;
  for (const name of new Set(params.keys())) {
    if (!KNOWN_PARAMS.has(name)) return apiError(400, `unexpected query parameter ${JSON.stringify(name)}`);
  }
  const types = params.getAll('type');
  if (types.length > 1) return apiError(400, 'type must be given at most once');
  const type = types[0];
  if (type !== undefined && !FILE_TYPES.has(type)) {
    return apiError(400, `type must be one of users, contracts, other; got ${JSON.stringify(type)}`);
  }
  const names = params.getAll('filenames');
  if (names.length === 0) return apiError(400, 'filenames is required');
  const seen = new Set<string>();
  for (const name of names) {
    if (name === '') return apiError(400, 'filenames must not be empty');
    if (name === '.' || name === '..')
      return apiError(400, `file name ${JSON.stringify(name)} must not be "." or ".."`);
    if (Buffer.byteLength(name) > MAX_NAME_BYTES) return apiError(400, `file name longer than ${MAX_NAME_BYTES} bytes`);
    if (seen.has(name)) return apiError(400, `duplicate file name ${JSON.stringify(name)}`);
    seen.add(name);
  }

  const expires = Math.floor(context.clock.now() / 1000) + context.config.signedUrlTtlSeconds;
  // Object.fromEntries defines own properties, so a file named "__proto__" stays an ordinary key.
  const map = Object.fromEntries(
    names.map((name) => [name, context.signer.issue(context.config.uploadUrl, appId, name, type, expires)]),
  );
  return jsonResponse(200, map);
}
