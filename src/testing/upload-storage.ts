/**
 * PUT to a signed address: the storage host. Answers like an object store (S3), in XML.
 *
 * Order of checks: method (405), chunked transfer encoding (501; without a socket, a stream body
 * with no Content-Length, which the runtime would send chunked), missing Content-Length (411),
 * signature (403 AccessDenied / SignatureDoesNotMatch), expiry (403 AccessDenied), app still
 * exists (404 NoSuchBucket), size (400 EntityTooLarge), body length matches (400 IncompleteBody).
 * The body is hashed as it streams; its bytes are kept while `maxStoredUploadBytes` has room.
 */
import { parseContentLength } from './body.js';
import { bodyIsStream, bodyLengthOf, streamsAlwaysChunked } from './body-length.js';
import type { EmulatorContext, IncomingRequest } from './context.js';
import { xmlError } from './responses.js';
import { receiveUploadBody } from './upload-body.js';

function chunkedRefused(): Response {
  return xmlError(501, 'NotImplemented', 'A header you provided implies functionality that is not implemented', {
    header: 'Transfer-Encoding',
  });
}

export async function handleUpload(
  context: EmulatorContext,
  incoming: IncomingRequest,
  pathBelowPrefix: string,
): Promise<Response> {
  const { request, url, wire } = incoming;
  const { config, state, clock, signer } = context;
  if (request.method !== 'PUT') {
    return xmlError(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource', {
      allow: 'PUT',
    });
  }
  const transferEncoding = wire ? wire.transferEncoding : (request.headers.get('transfer-encoding') ?? undefined);
  if (transferEncoding !== undefined && /chunked/i.test(transferEncoding)) return chunkedRefused();
  // Without a socket, a body of known length (a Blob, bytes) is sent with that length by the runtime.
  const lengthHeader = wire
    ? wire.contentLength
    : (request.headers.get('content-length') ?? bodyLengthOf(request)?.toString() ?? undefined);
  const declared = parseContentLength(lengthHeader);
  // Without a socket, judge the body as the runtime would send it: a stream goes chunked without a
  // Content-Length header, and on Deno even with one.
  const wouldBeChunked = !wire && bodyIsStream(request) === true && (declared === undefined || streamsAlwaysChunked());
  if (wouldBeChunked && config.requireContentLength !== false) return chunkedRefused();
  if (declared === undefined && (wire || config.requireContentLength === true)) {
    return xmlError(411, 'MissingContentLength', 'You must provide the Content-Length HTTP header.');
  }
  if (declared !== undefined && Number.isNaN(declared)) {
    return xmlError(400, 'InvalidArgument', 'Content-Length is not a valid number');
  }

  const verified = signer.verify(url, pathBelowPrefix, clock.now() / 1000);
  if (!verified.ok) return xmlError(403, verified.code, verified.message);
  const { appId, fileName, type } = verified.claims;
  if (!state.apps.has(appId)) return xmlError(404, 'NoSuchBucket', 'The specified bucket does not exist');
  if (declared !== undefined && declared > config.maxUploadBytes) {
    return xmlError(400, 'EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size');
  }

  // A reset while the body streams starts a new budget; this PUT's reservations stay in the old one.
  const budget = state.uploadBudget;
  const body = await receiveUploadBody(request, config.maxUploadBytes, budget);
  if (!body.ok) {
    return body.reason === 'too-large'
      ? xmlError(400, 'EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size')
      : xmlError(400, 'IncompleteBody', 'The request body ended early');
  }
  if (declared !== undefined && declared !== body.size) {
    if (body.bytes) budget.release(body.size);
    return xmlError(400, 'IncompleteBody', 'You did not provide the number of bytes specified by the Content-Length');
  }
  const stored = new Response(null, {
    status: 200,
    statusText: 'OK',
    headers: { etag: body.etag, 'content-length': '0' },
  });
  // A reset since the PUT arrived forgot files: answered as the store would, kept nowhere.
  if (!state.isCurrent(incoming.generation)) return stored;

  const files = state.filesOf(appId);
  const previous = files.get(fileName);
  if (previous) state.forgetFileBytes(previous);
  if (!body.bytes) state.uploadBudget.countFileWithoutBytes(1);
  files.set(fileName, {
    appId,
    name: fileName,
    type,
    bytes: body.bytes,
    size: body.size,
    sha256: body.sha256,
    etag: body.etag,
    contentType: request.headers.get('content-type') ?? undefined,
    authorization: request.headers.get('authorization') ?? undefined,
    uploadedAt: clock.now(),
    requestId: incoming.requestId,
    uploadCount: (previous?.uploadCount ?? 0) + 1,
  });
  return stored;
}
