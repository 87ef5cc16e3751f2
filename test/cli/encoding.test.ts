import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/exit-codes.js';
import { latin1ToWindows1252, textEncoding, UTF8 } from '../../src/cli/readers/encoding.js';

const latin1Of = (bytes: number[]) => Buffer.from(bytes).toString('latin1');

describe('--encoding', () => {
  it('takes any WHATWG label of UTF-8 or of a single-byte code page, by its standard name', () => {
    expect(textEncoding('utf8')).toBe(UTF8);
    expect(textEncoding(' UTF-8 ')).toBe(UTF8);
    // The standard makes latin1 and ascii labels of windows-1252.
    for (const label of ['cp1252', 'latin1', 'ISO-8859-1', 'windows-1252']) {
      expect(textEncoding(label).name).toBe('windows-1252');
    }
    expect(textEncoding('latin2').name).toBe('iso-8859-2');
    expect(textEncoding('koi8-r').name).toBe('koi8-r');
    // Its control bytes differ from ASCII's in ICU, but not those CSV is made of.
    expect(textEncoding('cp866').name).toBe('ibm866');
    // UTF-16 is transcoded to UTF-8 before parsing; the standard makes "utf-16" little-endian.
    expect(textEncoding('utf-16')).toMatchObject({ name: 'utf-16le', utf16: 'utf-16le' });
    expect(textEncoding('UTF-16BE')).toMatchObject({ name: 'utf-16be', utf16: 'utf-16be' });
  });

  it('refuses unknown names and encodings of several bytes per character other than UTF-16, naming the option', () => {
    for (const label of ['klingon', 'shift_jis', 'gb18030', 'big5', 'euc-kr', 'iso-2022-jp']) {
      expect(() => textEncoding(label)).toThrow(UsageError);
      expect(() => textEncoding(label)).toThrow(/^--encoding: /);
    }
  });

  it('reads every windows-1252 byte as the standard maps it, on every Node (Node 20 reads 0x80–0x9F as latin1)', () => {
    const ours = textEncoding('windows-1252');
    const every = Array.from({ length: 256 }, (_, byte) => byte);
    const text = ours.decodeCell(latin1Of(every)) as string;
    expect(text).toHaveLength(256);
    // From the code page's chart.
    expect([text[0x80], text[0x8c], text[0x93], text[0x96], text[0x9c], text[0x9f]]).toEqual([
      '€',
      'Œ',
      '“',
      '–',
      'œ',
      'Ÿ',
    ]);
    expect(text.slice(0xa0)).toBe(latin1Of(every.slice(0xa0)));
    const runtime = new TextDecoder('windows-1252').decode(Uint8Array.from(every));
    // Where the runtime follows the standard (Node 22 and later), the table used on Node 20
    // agrees with it, byte for byte.
    if (runtime[0x80] === '€') {
      expect(text).toBe(runtime);
      expect(latin1ToWindows1252(latin1Of(every))).toBe(runtime);
    }
    expect(ours.show(Uint8Array.of(0x80, 0x35))).toBe('€5');
  });

  it('decodes UTF-8 strictly: an invalid sequence is undefined, never U+FFFD', () => {
    expect(UTF8.decodeCell(latin1Of([0xc3, 0xa9]))).toBe('é');
    expect(UTF8.decodeCell(latin1Of([0xff]))).toBeUndefined();
    expect(UTF8.show(Uint8Array.of(0xff, 0x41))).toBe('\uFFFDA');
  });
});
