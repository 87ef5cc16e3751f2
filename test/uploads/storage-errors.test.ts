import { AbortError, ConnectionError, UploadError } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import {
  asUploadError,
  isRefusedSignature,
  parseStorageError,
  toUploadError,
} from '../../src/uploads/storage-errors.js';

const EXPIRED = `<?xml version="1.0" encoding="UTF-8"?>
<Error><Code>AccessDenied</Code><Message>Request has expired</Message><RequestId>1</RequestId></Error>`;

describe('storage host errors', () => {
  it('reads Code and Message from the XML body, decoding entities', () => {
    expect(
      parseStorageError('<Error><Code>Bad&amp;Code</Code><Message>a &lt;b&gt; &quot;c&quot;</Message></Error>'),
    ).toEqual({
      code: 'Bad&Code',
      message: 'a <b> "c"',
    });
    expect(parseStorageError('not xml')).toEqual({});
  });

  it('builds an UploadError with the file name, status, code and message', () => {
    const error = toUploadError('users.csv', 403, EXPIRED);
    expect(error).toBeInstanceOf(UploadError);
    expect(error).toMatchObject({
      fileName: 'users.csv',
      status: 403,
      storageCode: 'AccessDenied',
      storageMessage: 'Request has expired',
    });
    expect(error.message).toBe('Upload of "users.csv" failed with HTTP 403 (AccessDenied: Request has expired).');
  });

  it('treats expired or refused signatures as worth a fresh address, and nothing else', () => {
    expect(isRefusedSignature(toUploadError('f', 403, EXPIRED))).toBe(true);
    expect(isRefusedSignature(toUploadError('f', 403, '<Error><Code>SignatureDoesNotMatch</Code></Error>'))).toBe(true);
    expect(isRefusedSignature(toUploadError('f', 400, '<Error><Code>ExpiredToken</Code></Error>'))).toBe(true);
    expect(isRefusedSignature(toUploadError('f', 400, '<Error><Code>InvalidArgument</Code></Error>'))).toBe(false);
    expect(isRefusedSignature(toUploadError('f', 503, '<Error><Code>SlowDown</Code></Error>'))).toBe(false);
    expect(isRefusedSignature(toUploadError('f', 413, ''))).toBe(false);
  });

  it('wraps transport errors and aborts with the file name, keeping them as cause', () => {
    const cause = new ConnectionError('reset', { requestMaybeSent: true });
    const wrapped = asUploadError('a.bin', cause);
    expect(wrapped).toBeInstanceOf(UploadError);
    expect(wrapped).toMatchObject({ fileName: 'a.bin', cause });
    const abort = new AbortError('stop');
    expect(asUploadError('a.bin', abort)).toMatchObject({ fileName: 'a.bin', cause: abort });
    expect(asUploadError('a.bin', abort)).toBeInstanceOf(UploadError);
  });
});
