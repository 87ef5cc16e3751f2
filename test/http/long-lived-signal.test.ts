/**
 * One client in a long-lived service: every call gets the same shutdown signal. The heap soak
 * (100,000 calls, forced GC, every runtime) is `scripts/soak.ts`; this checks the cause on a small
 * scale: the package holds at most one listener on the caller's signal, however many calls are in
 * flight, and none once they settle.
 */
import { getEventListeners } from 'node:events';
import { AbortError, PublishStoppedError } from 'push-api-client';
import { createPushApiHandler, startEmulator } from 'push-api-client/testing';
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { clientFor } from '../support/clients.js';
import { SAMPLE_RECORD } from '../support/records.js';

const record = SAMPLE_RECORD;

function setup() {
  const emulator = createPushApiHandler({ keepRecords: false });
  const client = clientFor({
    fetch: emulator.fetch,
    authUrl: 'https://auth.push.test',
    baseUrl: 'https://api.push.test',
    scopeBase: 'https://api.push.test',
    clientId: 'demo-client',
    clientSecret: 'demo-secret-do-not-use-in-production',
  });
  return { emulator, client };
}

const listeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;

let warnings: Error[];
const onWarning = (warning: Error) => warnings.push(warning);
beforeEach(() => {
  warnings = [];
  process.on('warning', onWarning);
});
afterEach(() => {
  process.off('warning', onWarning);
});

describe('a shutdown signal shared by every call', () => {
  it('carries at most one listener while 50 calls of each operation are in flight, and none after', async () => {
    const { emulator, client } = setup();
    const shutdown = new AbortController();
    const signal = shutdown.signal;
    // Slow answers keep the calls in flight while the listeners are counted.
    emulator.faults.add({ delayMs: 20 });
    const seen: number[] = [];
    const sample = setInterval(() => seen.push(listeners(signal)), 2);
    try {
      for (let round = 0; round < 2; round++) {
        const calls = Array.from({ length: 50 }, (_, i) => {
          switch (i % 4) {
            case 0:
              return client.finance.publish('demo-app', [record], { signal });
            case 1:
              return client.finance.publishBatch('demo-app', [record], { signal });
            case 2:
              return client.uploads.upload('demo-app', [{ name: `f${i}.csv`, data: 'a\n' }], { signal });
            default:
              return client.tokens.getToken({ signal, forceRefresh: i % 8 === 3 });
          }
        });
        await Promise.all(calls);
      }
    } finally {
      clearInterval(sample);
    }
    // Counted while calls were in flight (1), never more.
    expect(seen).toContain(1);
    expect(Math.max(...seen)).toBe(1);
    expect(listeners(signal)).toBe(0);
    expect(warnings.map((warning) => warning.name)).not.toContain('MaxListenersExceededWarning');
  });

  it('still stops every call in flight when it fires, and is left with no listener', async () => {
    // Real HTTP, so that the abort reaches fetch and the sockets.
    const server = await startEmulator();
    onTestFinished(() => server.close());
    const client = clientFor(server);
    const shutdown = new AbortController();
    const signal = shutdown.signal;
    await client.tokens.getToken();
    server.mock.faults.add({ match: { operation: 'finance' }, times: Number.POSITIVE_INFINITY, delayMs: 5_000 });
    const calls = Array.from({ length: 50 }, (_, i) =>
      i % 2 === 0
        ? client.finance.publish('demo-app', [record], { signal })
        : client.finance.publishBatch('demo-app', [record], { signal }),
    );
    const started = performance.now();
    setTimeout(() => shutdown.abort(new Error('shutting down')), 50);
    const outcomes = await Promise.allSettled(calls);
    expect(performance.now() - started).toBeLessThan(4_000);
    for (const [i, outcome] of outcomes.entries()) {
      expect(outcome.status).toBe('rejected');
      const reason = (outcome as PromiseRejectedResult).reason;
      // A stopped publish wraps the abort; publishBatch rejects with it.
      expect(i % 2 === 0 ? (reason as PublishStoppedError).cause : reason).toBeInstanceOf(AbortError);
      if (i % 2 === 0) expect(reason).toBeInstanceOf(PublishStoppedError);
    }
    expect(listeners(signal)).toBe(0);
  });
});
