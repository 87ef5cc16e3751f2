import { UploadError } from 'push-api-client';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { describe, expect, it } from 'vitest';
import { fileNameProblem } from '../../src/internal/text.js';
import { clientFor } from '../support/clients.js';
import { rejectionOf } from '../support/recorders.js';

describe('file names', () => {
  it.each([
    ['users.csv'],
    ['contracts 2024 (final).json'],
    ['Zürich-Übersicht.csv'],
    ['日本語のファイル.txt'],
    ['emoji-📦.bin'],
    ['.hidden'],
    ['a'.repeat(1024)],
  ])('accepts %j', (name) => {
    expect(fileNameProblem(name)).toBeUndefined();
  });

  it.each([
    ['', /empty/],
    ['.', /"\."/],
    ['..', /"\.\."/],
    ['dir/file.csv', /path separator/],
    ['dir\\file.csv', /path separator/],
    ['tab\there.csv', /control/],
    ['nul\u0000.csv', /control/],
    ['del\u007f.csv', /control/],
    ['c1\u0085.csv', /control/],
    ['lone\ud800.csv', /surrogate/],
    ['é'.repeat(513), /1024 bytes/],
  ])('rejects %j', (name, reason) => {
    expect(fileNameProblem(name)).toMatch(reason);
  });
});

/** A client of an in-process emulator; `requests()` counts what reached it. */
function emulatedClient() {
  const mock = createPushApiMock();
  const client = clientFor({ clientOptions: () => mock.clientOptions(), fetch: mock.fetch });
  // getUploadUrls and upload of the same names, which must refuse them alike.
  const calls = (names: string[]) => [
    () => client.uploads.getUploadUrls(mock.appId, names),
    () =>
      client.uploads.upload(
        mock.appId,
        names.map((name, i) => ({ name, data: String(i) })),
      ),
  ];
  return { mock, client, calls, requests: () => mock.state.requests.length };
}

describe('file names of one call', () => {
  it('getUploadUrls and upload throw an UploadError naming the first bad name, before any request', async () => {
    const { calls, requests } = emulatedClient();
    for (const call of calls(['ok.csv', 'bad/name.csv', 'worse\u0000.csv'])) {
      const error = await rejectionOf(call());
      expect(error).toBeInstanceOf(UploadError);
      expect(error).toMatchObject({ fileName: 'bad/name.csv' });
      expect(error.message).toBe(
        'Invalid file name "bad/name.csv": it must not contain a path separator ("/" or "\\").',
      );
    }
    expect(requests()).toBe(0);
  });

  it('getUploadUrls and upload reject the same name twice in one call, before any request', async () => {
    const { calls, requests } = emulatedClient();
    for (const call of calls(['a.csv', 'b.csv', 'a.csv'])) {
      const error = await rejectionOf(call());
      expect(error).toBeInstanceOf(UploadError);
      expect(error).toMatchObject({ fileName: 'a.csv' });
      expect(error.message).toMatch(/^Duplicate file name "a.csv"/);
    }
    expect(requests()).toBe(0);
  });
});
