import { describe, expect, it } from 'vitest';
import {
  BatchBuilder,
  type BatchItem,
  buildBody,
  EMPTY_BODY_BYTES,
  type FittingItem,
  serializeRecord,
  sizeUp,
  utf8Length,
} from '../../src/finance/batcher.js';

const bytesOf = (text: string) => Buffer.byteLength(text, 'utf8');

/** The item, through the one door a builder accepts: sized up against `maxBatchBytes`. */
function fitting<T>(item: BatchItem<T>, maxBatchBytes: number): FittingItem<T> {
  const sized = sizeUp(item, maxBatchBytes);
  if (!sized.fits) throw new Error(`test item of ${sized.bytes} bytes does not fit in ${maxBatchBytes}`);
  return sized.item;
}

describe('serializeRecord', () => {
  it('measures multi-byte characters as UTF-8 bytes, as they are sent', () => {
    const item = serializeRecord(0, { vendor: 'Café 東京 🚀' });
    expect(utf8Length(item)).toBe(bytesOf(item.json ?? ''));
    expect(utf8Length(item)).toBeGreaterThan(item.json?.length ?? 0);
  });
});

describe('sizeUp', () => {
  const item = serializeRecord(0, { v: 'x'.repeat(20) }); // 28 bytes of JSON

  it('says how large a record is that cannot be sent even alone, and hands out no item for it', () => {
    const sized = sizeUp(item, EMPTY_BODY_BYTES + utf8Length(item) - 1);
    expect(sized).toEqual({ fits: false, bytes: 28 });
  });

  it('hands out the item itself when it fits exactly', () => {
    expect(sizeUp(item, EMPTY_BODY_BYTES + utf8Length(item))).toEqual({ fits: true, item });
  });

  it('is the only way into a batch (checked by the type checker)', () => {
    const builder = new BatchBuilder<{ v: string }>({ batchSize: 10, maxBatchBytes: 1000 });
    // @ts-expect-error an item that was not sized up could be too large for any request
    const unsized = () => builder.tryAdd(item);
    expect(typeof unsized).toBe('function');
    expect(builder.tryAdd(fitting(item, 1000))).toBe('added');
  });
});

describe('BatchBuilder.tryAdd', () => {
  const item = serializeRecord(0, { v: 'x'.repeat(20) }); // 28 bytes of JSON
  const itemBytes = utf8Length(item);

  it('takes a record that makes the body exactly maxBatchBytes, and refuses one byte less', () => {
    const exact = EMPTY_BODY_BYTES + itemBytes * 2 + 1;
    const fits = new BatchBuilder<{ v: string }>({ batchSize: 10, maxBatchBytes: exact });
    const one = fitting(item, exact);
    expect([fits.tryAdd(one), fits.tryAdd(one)]).toEqual(['added', 'added']);
    expect(fits.bodyBytes).toBe(exact);
    expect(bytesOf(buildBody(fits.take()))).toBe(exact);
    const short = new BatchBuilder<{ v: string }>({ batchSize: 10, maxBatchBytes: exact - 1 });
    const other = fitting(item, exact - 1);
    expect([short.tryAdd(other), short.tryAdd(other)]).toEqual(['added', 'full']);
  });

  it('says full at batchSize records', () => {
    const builder = new BatchBuilder<{ v: string }>({ batchSize: 2, maxBatchBytes: 10_000 });
    const one = fitting(item, 10_000);
    expect([builder.tryAdd(one), builder.tryAdd(one), builder.tryAdd(one)]).toEqual(['added', 'added', 'full']);
  });

  it('measures UTF-8 exactly near the limit, and not at all far from it', () => {
    const exact = EMPTY_BODY_BYTES + 68 * 2 + 1; // under 3 bytes per code unit, above the true size
    const wide = () => fitting(serializeRecord(0, { v: '東'.repeat(20) }), exact); // 28 code units, 68 bytes
    const near = new BatchBuilder<{ v: string }>({ batchSize: 10, maxBatchBytes: exact });
    expect([near.tryAdd(wide()), near.tryAdd(wide()), near.tryAdd(wide())]).toEqual(['added', 'added', 'full']);
    expect(near.bodyBytes).toBe(exact);
    const far = new BatchBuilder<{ v: string }>({ batchSize: 10, maxBatchBytes: 1_000_000 });
    const first = fitting({ index: 0, record: { v: '東'.repeat(20) }, bound: 200 }, 1_000_000);
    far.tryAdd(first);
    expect(first.bytes).toBeUndefined();
  });
});
