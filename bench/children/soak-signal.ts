/**
 * The long-lived service soak: one client, calls of one record in bursts, every call given the
 * same shutdown signal, as a backend does. Prints one JSON line: heap after forced GC before and
 * after the calls, and the warnings the runtime printed (MaxListenersExceededWarning).
 *
 * Runs on bare Node (`--expose-gc`), Bun and Deno (`--v8-flags=--expose-gc`). The emulator's core
 * handler answers through a custom fetch, so no socket is involved and the calls are cheap; its
 * state is reset before each measurement so that only the client's memory is counted.
 * `tsx scripts/soak.ts` runs it on every runtime; `npm run bench` reports it for Node.
 *
 * Environment: SOAK_CALLS (default 100000), SOAK_BURST (50), SOAK_SIGNAL (`shared` or `none`).
 */
import { PushClient } from '../../src/index.js';
import { createPushApiHandler, DEMO_APP_ID, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET } from '../../src/testing/index.js';

declare const Bun: { gc(force: boolean): void; version: string } | undefined;
declare const Deno: { version: { deno: string } } | undefined;

const env = typeof process !== 'undefined' ? process.env : {};
const calls = Number(env.SOAK_CALLS ?? 100_000);
const burst = Number(env.SOAK_BURST ?? 50);
const shared = (env.SOAK_SIGNAL ?? 'shared') === 'shared';

const warnings: string[] = [];
process.on('warning', (warning) => warnings.push(`${warning.name}: ${warning.message}`));

function runtime(): string {
  if (typeof Bun !== 'undefined') return `bun ${Bun.version}`;
  if (typeof Deno !== 'undefined') return `deno ${Deno.version.deno}`;
  return `node ${process.versions.node}`;
}

async function collect(): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; i < 4; i++) {
    if (typeof Bun !== 'undefined') Bun.gc(true);
    else if (gc) gc();
    else throw new Error('no forced GC: run node with --expose-gc, deno with --v8-flags=--expose-gc');
    // Finalizers and weak-reference cleanups run between turns.
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return process.memoryUsage().heapUsed;
}

const emulator = createPushApiHandler({ keepRecords: false, maxRequestLog: 1_000 });
const client = new PushClient({
  clientId: DEMO_CLIENT_ID,
  clientSecret: DEMO_CLIENT_SECRET,
  authUrl: 'https://auth.push.test',
  baseUrl: 'https://api.push.test',
  scopeBase: 'https://api.push.test',
  // The core handler answers at once, so the attempt's signal has nothing to abort and is not
  // handed on: undici's Request registers every signal it is given in a FinalizationRegistry whose
  // table keeps its high-water size (about 3.7 MB per 100,000 Requests made between two major GCs
  // on Node 20), which would be counted against the client.
  fetch: (input, init) => emulator.handle(new Request(input, { ...init, signal: undefined })),
  env: {},
});
const shutdown = new AbortController();
const record = {
  created: '2025-01-31',
  amount: 42,
  currency: 'USD',
  identifier: 'soak@example.com',
  type: 'expense',
  vendor: 'Acme',
} as const;

async function run(count: number): Promise<void> {
  const options = shared ? { signal: shutdown.signal } : {};
  for (let done = 0; done < count; done += burst) {
    const size = Math.min(burst, count - done);
    const reports = await Promise.all(
      Array.from({ length: size }, () => client.finance.publish(DEMO_APP_ID, [record], options)),
    );
    for (const report of reports) if (report.recordsSent !== 1) throw new Error('a record was not sent');
  }
}

// Warm up: code paths compiled, the token fetched, pools at their working size.
await run(Math.min(5_000, calls));
emulator.reset();
const before = await collect();
const started = performance.now();
await run(calls);
const durationMs = performance.now() - started;
emulator.reset();
const after = await collect();
const mb = (bytes: number) => Math.round((bytes / 1_048_576) * 100) / 100;
process.stdout.write(
  `${JSON.stringify({
    runtime: runtime(),
    calls,
    burst,
    signal: shared ? 'shared' : 'none',
    heapBeforeMB: mb(before),
    heapAfterMB: mb(after),
    growthMB: mb(after - before),
    durationMs: Math.round(durationMs),
    warnings: [...new Set(warnings)],
  })}\n`,
);
shutdown.abort();
