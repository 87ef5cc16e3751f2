import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BatchBuilder,
  buildBody,
  chunkByLimits,
  EMPTY_BODY_BYTES,
  serializeRecord,
} from '../../src/finance/batcher.js';

const bytesOf = (text: string) => Buffer.byteLength(text, 'utf8');

describe('chunkByLimits', () => {
  it('puts every record in exactly one batch, in order, within the count and the exact body-byte limit', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ id: fc.nat(), text: fc.string({ unit: 'binary', maxLength: 40 }) }), { maxLength: 200 }),
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 60, max: 2000 }),
        (records, batchSize, maxBatchBytes) => {
          const items = records.map((record, index) => serializeRecord(index, record));
          const tooLarge: number[] = [];
          const batches = [...chunkByLimits(items, { batchSize, maxBatchBytes }, (item) => tooLarge.push(item.index))];
          const seen = batches.flat().map((item) => item.index);
          const expected = items.map((item) => item.index).filter((index) => !tooLarge.includes(index));
          expect(seen).toEqual(expected);
          for (const batch of batches) {
            expect(batch.length).toBeGreaterThan(0);
            expect(batch.length).toBeLessThanOrEqual(batchSize);
            const body = buildBody(batch);
            expect(bytesOf(body)).toBeLessThanOrEqual(maxBatchBytes);
            expect(JSON.parse(body)).toEqual({ records: batch.map((item) => records[item.index]) });
          }
          for (const index of tooLarge) {
            expect(EMPTY_BODY_BYTES + (items[index]?.bytes ?? 0)).toBeGreaterThan(maxBatchBytes);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('fills each batch until the next record would break a limit', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 30 }), { minLength: 1, maxLength: 100 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 50, max: 400 }),
        (texts, batchSize, maxBatchBytes) => {
          const items = texts.map((text, index) => serializeRecord(index, { text }));
          const batches = [...chunkByLimits(items, { batchSize, maxBatchBytes })];
          for (let i = 0; i + 1 < batches.length; i++) {
            const current = batches[i] ?? [];
            const next = batches[i + 1]?.[0];
            if (!next) continue;
            const wouldBe = bytesOf(buildBody([...current, next]));
            expect(current.length === batchSize || wouldBe > maxBatchBytes).toBe(true);
          }
        },
      ),
    );
  });

  it('measures multi-byte characters as UTF-8 bytes, as they are sent', () => {
    const item = serializeRecord(0, { vendor: 'Café 東京 🚀' });
    expect(item.bytes).toBe(bytesOf(item.json));
    expect(item.bytes).toBeGreaterThan(item.json.length);
  });
});

describe('BatchBuilder.tryAdd', () => {
  const item = serializeRecord(0, { v: 'x'.repeat(20) }); // 28 bytes of JSON

  it('takes a record that makes the body exactly maxBatchBytes, and refuses one byte less', () => {
    const exact = EMPTY_BODY_BYTES + item.bytes * 2 + 1;
    const fits = new BatchBuilder<typeof item>({ batchSize: 10, maxBatchBytes: exact });
    expect([fits.tryAdd(item), fits.tryAdd(item)]).toEqual(['added', 'added']);
    expect(fits.bodyBytes).toBe(exact);
    expect(bytesOf(buildBody(fits.take()))).toBe(exact);
    const short = new BatchBuilder({ batchSize: 10, maxBatchBytes: exact - 1 });
    expect([short.tryAdd(item), short.tryAdd(item)]).toEqual(['added', 'full']);
  });

  it('reports a record too large to be sent even alone', () => {
    const builder = new BatchBuilder({ batchSize: 10, maxBatchBytes: EMPTY_BODY_BYTES + item.bytes - 1 });
    expect(builder.tryAdd(item)).toBe('too-large');
    expect(builder.count).toBe(0);
  });

  it('says full at batchSize records', () => {
    const builder = new BatchBuilder({ batchSize: 2, maxBatchBytes: 10_000 });
    expect([builder.tryAdd(item), builder.tryAdd(item), builder.tryAdd(item)]).toEqual(['added', 'added', 'full']);
  });
});
