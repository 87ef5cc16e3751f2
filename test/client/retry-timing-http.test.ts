/** Retry timing and derived clients over real HTTP to the emulator on 127.0.0.1 (no msw). */
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { SAMPLE_RECORD } from '../support/records.js';

const instant = { backoff: { initialDelayMs: 0, maxDelayMs: 0 }, maxRetryAfterMs: 0 } as const;

async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await run();
  return { value, ms: performance.now() - started };
}

describe('retry timing over real HTTP', () => {
  let emulator: RunningEmulator;
  beforeAll(async () => {
    emulator = await startEmulator();
  });
  afterAll(async () => {
    await emulator.close();
  });

  it('a derived client with every wait at 0 gets through a 429 (Retry-After: 5) and a 503 at once, on the shared token', async () => {
    const base = clientFor(emulator);
    await base.tokens.getToken();
    const fast = base.withOptions(instant);
    emulator.mock.faults.add({ match: { operation: 'finance' }, status: 429, retryAfter: 5 });
    emulator.mock.faults.add({ match: { operation: 'finance' }, status: 503 });
    const { value: report, ms } = await timed(() => fast.finance.publish(emulator.mock.appId, [SAMPLE_RECORD]));
    expect(report.recordsSent).toBe(1);
    expect(ms).toBeLessThan(1_000);
    const finance = emulator.mock.state.requests.filter((r) => r.operation === 'finance');
    expect(finance.map((r) => r.status)).toEqual([429, 503, 200]);
    expect(emulator.mock.state.tokenRequestCount).toBe(1);
  });
});
