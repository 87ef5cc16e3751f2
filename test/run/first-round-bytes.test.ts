/**
 * A publish's first round goes out before any answer, so it holds no more request-body bytes than
 * a slow uplink carries in a quarter of the attempt timeout (docs/performance.md). The bound is on
 * the bytes that cross the link: a body of non-ASCII text takes up to three bytes per character,
 * and a window fitted by characters would send three times the bound blind.
 */

import { describe, expect, it } from 'vitest';
import { HOSTILE_APP_ID, useHostileService } from '../support/hostile-service.js';
import { financeRecord } from '../support/records.js';

const start = useHostileService();

/** At a 4 s attempt timeout the first round holds 250,000 bytes (2 Mbit/s for a second). */
const TIMEOUT_MS = 4_000;
const START_BYTES = 250_000;

async function bytesBeforeFirstAnswer(description: string): Promise<{ blind: number; sent: number }> {
  let answered = false;
  let blind = 0;
  const service = await start((request, res) => {
    if (request.route !== 'finance') return false;
    if (!answered) blind += Buffer.byteLength(request.body);
    setTimeout(() => {
      answered = true;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}');
    }, 300);
    return true;
  });
  const records = Array.from({ length: 200 }, (_, i) => financeRecord(i, { description }));
  const report = await service
    .client({ timeoutMs: TIMEOUT_MS })
    .finance.publish(HOSTILE_APP_ID, records, { batchSize: 20 });
  return { blind, sent: report.recordsSent };
}

describe("a publish's first round", () => {
  it('holds no more bytes than the bound when its text takes three bytes a character', async () => {
    // About 61 kB a batch in UTF-8, 21,000 characters: by characters, all 8 would fit (490 kB).
    const { blind, sent } = await bytesBeforeFirstAnswer('日'.repeat(1_000));
    expect(sent).toBe(200);
    expect(blind).toBeGreaterThan(0);
    expect(blind).toBeLessThanOrEqual(START_BYTES);
  }, 30_000);

  it('is not narrowed further for ASCII text of the same length in characters', async () => {
    // About 21 kB a batch: 8 of them (170 kB) fit within the bound.
    const { blind, sent } = await bytesBeforeFirstAnswer('x'.repeat(1_000));
    expect(sent).toBe(200);
    expect(blind).toBeGreaterThan(150_000);
    expect(blind).toBeLessThanOrEqual(START_BYTES);
  }, 30_000);
});
