import { describe, expect, it } from 'vitest';
import { BatchBuilder, buildBody, EMPTY_BODY_BYTES, serializeRecord, utf8Length } from '../../src/finance/batcher.js';

const bytesOf = (text: string) => Buffer.byteLength(text, 'utf8');

describe('serializeRecord', () => {
  it('measures multi-byte characters as UTF-8 bytes, as they are sent', () => {
    const item = serializeRecord(0, { vendor: 'Café 東京 🚀' });
    expect(utf8Length(item)).toBe(bytesOf(item.json ?? ''));
    expect(utf8Length(item)).toBeGreaterThan(item.json?.length ?? 0);
  });
});

describe('BatchBuilder.tryAdd', () => {
  const item = serializeRecord(0, { v: 'x'.repeat(20) }); // 28 bytes of JSON
  const itemBytes = utf8Length(item);

  it('takes a record that makes the body exactly maxBatchBytes, and refuses one byte less', () => {
    const exact = EMPTY_BODY_BYTES + itemBytes * 2 + 1;
    const fits = new BatchBuilder<typeof item>({ batchSize: 10, maxBatchBytes: exact });
    expect([fits.tryAdd(item), fits.tryAdd(item)]).toEqual(['added', 'added']);
    expect(fits.bodyBytes).toBe(exact);
    expect(bytesOf(buildBody(fits.take()))).toBe(exact);
    const short = new BatchBuilder({ batchSize: 10, maxBatchBytes: exact - 1 });
    expect([short.tryAdd(item), short.tryAdd(item)]).toEqual(['added', 'full']);
  });

  it('reports a record too large to be sent even alone', () => {
    const builder = new BatchBuilder({ batchSize: 10, maxBatchBytes: EMPTY_BODY_BYTES + itemBytes - 1 });
    expect(builder.tryAdd(item)).toBe('too-large');
    expect(builder.count).toBe(0);
  });

  it('says full at batchSize records', () => {
    const builder = new BatchBuilder({ batchSize: 2, maxBatchBytes: 10_000 });
    expect([builder.tryAdd(item), builder.tryAdd(item), builder.tryAdd(item)]).toEqual(['added', 'added', 'full']);
  });

  it('measures UTF-8 exactly near the limit, and not at all far from it', () => {
    const wide = () => serializeRecord(0, { v: '東'.repeat(20) }); // 28 code units, 68 bytes
    const exact = EMPTY_BODY_BYTES + 68 * 2 + 1; // under 3 bytes per code unit, above the true size
    const near = new BatchBuilder<ReturnType<typeof wide>>({ batchSize: 10, maxBatchBytes: exact });
    expect([near.tryAdd(wide()), near.tryAdd(wide()), near.tryAdd(wide())]).toEqual(['added', 'added', 'full']);
    expect(near.bodyBytes).toBe(exact);
    const far = new BatchBuilder<ReturnType<typeof wide>>({ batchSize: 10, maxBatchBytes: 1_000_000 });
    const first = wide();
    far.tryAdd(first);
    expect(first.bytes).toBeUndefined();
  });
});
