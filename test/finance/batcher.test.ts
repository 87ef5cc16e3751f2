import { describe, expect, it } from 'vitest';
import {
  BatchBuilder,
  buildBody,
  EMPTY_BODY_BYTES,
  type FittingSize,
  fitsByBound,
  sizeUp,
} from '../../src/finance/batcher.js';

const bytesOf = (text: string) => Buffer.byteLength(text, 'utf8');

/** A record's size, through the one door a builder accepts: sized up against `maxBatchBytes`. */
function fitting(record: unknown, maxBatchBytes: number): { size: FittingSize; json: string | undefined } {
  const sized = sizeUp(record, JSON.stringify(record).length * 3, maxBatchBytes);
  if (!sized.fits) throw new Error(`test record of ${sized.bytes} bytes does not fit in ${maxBatchBytes}`);
  return sized;
}

describe('sizeUp', () => {
  const record = { v: 'x'.repeat(20) }; // 28 bytes of JSON
  const bytes = 28;

  it('says how large a record is that cannot be sent even alone', () => {
    expect(sizeUp(record, 1000, EMPTY_BODY_BYTES + bytes - 1)).toEqual({ fits: false, bytes });
  });

  it('takes a record that fits exactly, measured, with the JSON it measured', () => {
    expect(sizeUp(record, 1000, EMPTY_BODY_BYTES + bytes)).toEqual({
      fits: true,
      size: bytes,
      json: JSON.stringify(record),
    });
  });

  it('measures multi-byte characters as UTF-8 bytes, as they are sent', () => {
    const wide = { vendor: 'Café 東京 🚀' };
    const json = JSON.stringify(wide);
    const sized = sizeUp(wide, 10_000, EMPTY_BODY_BYTES + bytesOf(json));
    expect(sized).toEqual({ fits: true, size: bytesOf(json), json });
    expect(bytesOf(json)).toBeGreaterThan(json.length);
  });

  it('serializes nothing when the bound alone shows the record fits', () => {
    expect(sizeUp(record, 100, EMPTY_BODY_BYTES + 100)).toEqual({ fits: true, size: 100, json: undefined });
    expect(fitsByBound(100, EMPTY_BODY_BYTES + 99)).toBeUndefined();
  });

  it('is the only way into a batch (checked by the type checker)', () => {
    const builder = new BatchBuilder<{ v: string }>({ batchSize: 10, maxBatchBytes: 1000 });
    // @ts-expect-error a size that was not sized up could be too large for any request
    const unsized = () => builder.tryAdd(0, record, 28);
    expect(typeof unsized).toBe('function');
    expect(builder.tryAdd(0, record, fitting(record, 1000).size)).toBe('added');
  });
});

describe('BatchBuilder.tryAdd', () => {
  const record = { v: 'x'.repeat(20) }; // 28 bytes of JSON
  const recordBytes = 28;

  it('takes a record that makes the body exactly maxBatchBytes, and refuses one byte less', () => {
    const exact = EMPTY_BODY_BYTES + recordBytes * 2 + 1;
    const fits = new BatchBuilder<{ v: string }>({ batchSize: 10, maxBatchBytes: exact });
    const { size } = fitting(record, exact);
    expect([fits.tryAdd(0, record, size), fits.tryAdd(1, record, size)]).toEqual(['added', 'added']);
    expect(fits.bodyBytes).toBe(exact);
    const taken = fits.take();
    expect(bytesOf(buildBody(taken.records, taken.jsons))).toBe(exact);
    const short = new BatchBuilder<{ v: string }>({ batchSize: 10, maxBatchBytes: exact - 1 });
    const other = fitting(record, exact - 1).size;
    expect([short.tryAdd(0, record, other), short.tryAdd(1, record, other)]).toEqual(['added', 'full']);
  });

  it('says full at batchSize records', () => {
    const builder = new BatchBuilder<{ v: string }>({ batchSize: 2, maxBatchBytes: 10_000 });
    const { size } = fitting(record, 10_000);
    const added = [0, 1, 2].map((index) => builder.tryAdd(index, record, size));
    expect(added).toEqual(['added', 'added', 'full']);
  });

  it('measures UTF-8 exactly near the limit, and not at all far from it', () => {
    const wide = { v: '東'.repeat(20) }; // 28 code units, 68 bytes
    const exact = EMPTY_BODY_BYTES + 68 * 2 + 1; // under 3 bytes per code unit, above the true size
    const near = new BatchBuilder<typeof wide>({ batchSize: 10, maxBatchBytes: exact });
    const bound = fitsByBound(84, exact);
    if (bound === undefined) throw new Error('a bound of 84 should fit alone');
    expect([0, 1, 2].map((index) => near.tryAdd(index, wide, bound))).toEqual(['added', 'added', 'full']);
    expect(near.bodyBytes).toBe(exact);
    expect(near.take().jsons).toEqual([JSON.stringify(wide), JSON.stringify(wide)]);
    const far = new BatchBuilder<typeof wide>({ batchSize: 10, maxBatchBytes: 1_000_000 });
    far.tryAdd(0, wide, fitting(wide, 1_000_000).size);
    expect(far.take().jsons).toBeUndefined();
  });

  it('hands over the input indexes it was asked to keep, and the first and last either way', () => {
    const kept = new BatchBuilder<{ v: string }>({ batchSize: 10, maxBatchBytes: 10_000 }, true);
    const dropped = new BatchBuilder<{ v: string }>({ batchSize: 10, maxBatchBytes: 10_000 });
    const { size } = fitting(record, 10_000);
    for (const index of [3, 5, 9]) {
      kept.tryAdd(index, record, size);
      dropped.tryAdd(index, record, size);
    }
    expect(kept.take()).toMatchObject({ firstIndex: 3, lastIndex: 9, indexes: [3, 5, 9] });
    expect(dropped.take()).toMatchObject({ firstIndex: 3, lastIndex: 9, indexes: [] });
    expect(kept.take()).toMatchObject({ records: [], firstIndex: -1, lastIndex: -1, indexes: [] });
  });

  it('joins a body from the records it serialized and stringifies the others, byte for byte as JSON.stringify', () => {
    const records = [{ v: 'a"\\' }, { v: '\u2028 東 🚀' }, { v: 'plain' }, { v: '\ud800' }];
    const max = EMPTY_BODY_BYTES + 60;
    const builder = new BatchBuilder<{ v: string }>({ batchSize: 10, maxBatchBytes: 10_000 });
    records.forEach((one, index) => {
      // A bound of 1000 is within 10,000 but not within `max`: the even records are serialized to be measured.
      const sized = sizeUp(one, 1000, index % 2 === 0 ? max : 10_000);
      if (!sized.fits) throw new Error('every record here fits alone');
      builder.tryAdd(index, one, sized.size, sized.json);
    });
    const taken = builder.take();
    expect(taken.jsons?.filter((json) => json !== undefined)).toHaveLength(2);
    expect(buildBody(taken.records, taken.jsons)).toBe(JSON.stringify({ records }));
  });
});
