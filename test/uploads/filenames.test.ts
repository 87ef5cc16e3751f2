import { UploadError } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { fileNameProblem } from '../../src/internal/text.js';
import { assertValidFileNames } from '../../src/uploads/uploader.js';

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

  it('throws an UploadError naming the first bad name', () => {
    const error = catchError(() => assertValidFileNames(['ok.csv', 'bad/name.csv']));
    expect(error).toBeInstanceOf(UploadError);
    expect(error).toMatchObject({ fileName: 'bad/name.csv' });
    expect((error as Error).message).toContain('bad/name.csv');
  });

  it('rejects the same name twice in one call', () => {
    const error = catchError(() => assertValidFileNames(['a.csv', 'b.csv', 'a.csv']));
    expect(error).toBeInstanceOf(UploadError);
    expect((error as Error).message).toMatch(/Duplicate file name "a.csv"/);
  });
});

function catchError(fn: () => void): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}
