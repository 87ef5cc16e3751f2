/**
 * Signed upload addresses, shaped like object-store presigned PUT URLs:
 * `{upload_url}/{appId}/{fileName}?type=…&expires=…&id=…&signature=…`.
 *
 * The signature is HMAC-SHA256 over method, path, expiry, app, type and id, so no part can be
 * changed without the storage host noticing. `id` is a sequence number that lets
 * `expireSignedUrls()` invalidate every address issued so far without touching the clock.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export interface SignedUrlClaims {
  appId: string;
  fileName: string;
  type: string | undefined;
  /** Unix seconds. */
  expires: number;
  id: number;
}

export type VerifyResult =
  | { ok: true; claims: SignedUrlClaims }
  | { ok: false; code: 'AccessDenied' | 'SignatureDoesNotMatch'; message: string };

export class UrlSigner {
  readonly #key = randomBytes(32);
  #nextId = 1;
  #firstValidId = 1;

  #sign(method: string, path: string, expires: number, appId: string, type: string, id: number): string {
    return createHmac('sha256', this.#key)
      .update(`${method}\n${path}\n${expires}\n${appId}\n${type}\n${id}`)
      .digest('hex');
  }

  /** Builds the address for one file; `uploadUrl` has no trailing slash. */
  issue(uploadUrl: string, appId: string, fileName: string, type: string | undefined, expires: number): string {
    const id = this.#nextId++;
    const url = new URL(`${uploadUrl}/${encodeURIComponent(appId)}/${encodeURIComponent(fileName)}`);
    const signature = this.#sign('PUT', url.pathname, expires, appId, type ?? '', id);
    if (type !== undefined) url.searchParams.set('type', type);
    url.searchParams.set('expires', String(expires));
    url.searchParams.set('id', String(id));
    url.searchParams.set('signature', signature);
    return url.href;
  }

  /** Every address issued before this call is refused as expired. */
  expireAll(): void {
    this.#firstValidId = this.#nextId;
  }

  /**
   * Checks a PUT's address. `relativePath` is the path below the upload prefix, `/{app}/{name}`;
   * `nowSeconds` is the emulator clock.
   */
  verify(url: URL, relativePath: string, nowSeconds: number): VerifyResult {
    const params = url.searchParams;
    const signature = params.get('signature');
    const expiresText = params.get('expires');
    const idText = params.get('id');
    if (signature === null || expiresText === null || idText === null) {
      return {
        ok: false,
        code: 'AccessDenied',
        message: 'Query-string authentication requires the signature, expires and id parameters',
      };
    }
    const segments = relativePath.split('/');
    if (segments.length !== 3 || segments[0] !== '' || !segments[1] || !segments[2]) {
      return { ok: false, code: 'SignatureDoesNotMatch', message: 'The address does not name an app and a file' };
    }
    let appId: string;
    let fileName: string;
    try {
      appId = decodeURIComponent(segments[1]);
      fileName = decodeURIComponent(segments[2]);
    } catch {
      return { ok: false, code: 'SignatureDoesNotMatch', message: 'The address is not validly encoded' };
    }
    const type = params.get('type') ?? undefined;
    const expires = Number(expiresText);
    const id = Number(idText);
    const expected = Buffer.from(this.#sign('PUT', url.pathname, expires, appId, type ?? '', id), 'hex');
    const given = Buffer.from(/^[0-9a-f]{64}$/.test(signature) ? signature : '', 'hex');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return {
        ok: false,
        code: 'SignatureDoesNotMatch',
        message: 'The request signature we calculated does not match the signature you provided',
      };
    }
    if (nowSeconds >= expires || id < this.#firstValidId) {
      return { ok: false, code: 'AccessDenied', message: 'Request has expired' };
    }
    return { ok: true, claims: { appId, fileName, type, expires, id } };
  }
}
