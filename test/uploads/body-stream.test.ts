/** The metered body stream of one PUT attempt: where it ends. */
import { describe, expect, it } from 'vitest';
import { BodyMeter, type ChunkReader } from '../../src/uploads/put-body.js';

/** A reader that hands out `chunks`, then never answers again (as a stalled source would). */
function readerOf(chunks: Uint8Array[], knowsItsEnd: boolean) {
  let index = 0;
  let closed = 0;
  const reader: ChunkReader = {
    read: () => (index < chunks.length ? Promise.resolve(chunks[index++]) : new Promise<undefined>(() => {})),
    close: async () => {
      closed++;
    },
    ...(knowsItsEnd && { atEnd: () => index === chunks.length }),
  };
  return { reader, closedCount: () => closed };
}

const bytes = (text: string) => new TextEncoder().encode(text);

describe('BodyMeter', () => {
  it('ends the body with its last chunk when the source knows it has no more, without another read', async () => {
    const { reader, closedCount } = readerOf([bytes('hello '), bytes('world')], true);
    const meter = new BodyMeter('a.txt', 11);
    const text = await new Response(meter.stream(reader)).text();
    expect(text).toBe('hello world');
    await meter.dispose();
    expect(closedCount()).toBeGreaterThanOrEqual(1);
  });

  it('reads once more to find the end of a source that does not know it', async () => {
    const { reader } = readerOf([bytes('hello '), bytes('world')], false);
    const stream = new BodyMeter('a.txt', 11).stream(reader);
    const body = stream.getReader();
    expect(await body.read()).toMatchObject({ done: false });
    expect(await body.read()).toMatchObject({ done: false });
    // The source never answers the read that would say it ended: the body has not ended.
    const next = await Promise.race([body.read(), new Promise((resolve) => setTimeout(() => resolve('pending'), 50))]);
    expect(next).toBe('pending');
    await body.cancel();
  });
});
