/**
 * Random Host and Origin headers and random control-route bodies over real HTTP: a request passes
 * only under a name the emulator was started for, and a control route answers 2xx or a 4xx in the
 * spec's error shape, never a 5xx, a dropped connection or a changed clock on a refused body.
 */
import { request } from 'node:http';
import fc from 'fast-check';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizeHost } from '../../src/testing/host-guard.js';
import { FUZZ_SEED } from './arbitraries.js';

let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startEmulator({ allowedHosts: ['emulator'] });
});
afterAll(() => emulator.close());

const ACCEPTED = new Set(['127.0.0.1', 'localhost', '[::1]', 'emulator']);

function send(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: string }> {
  const url = new URL(emulator.url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, method, path, headers, setHost: false, timeout: 5000 },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

const hostLike = fc.oneof(
  fc.constantFrom('127.0.0.1', 'localhost', '[::1]', 'emulator', 'LOCALHOST', '127.1', 'evil.example', '0.0.0.0'),
  fc.domain(),
  fc.ipV4(),
  fc.string({ unit: 'binary-ascii', maxLength: 40 }),
);
// Header values Node's client will send: printable ASCII, no surrounding spaces.
const headerSafe = (text: string) => /^[\x20-\x7e]*$/.test(text) && text.trim() === text;

describe('Host allow-list under random names', () => {
  it('lets a request through exactly when its Host names the emulator', async () => {
    await fc.assert(
      fc.asyncProperty(
        hostLike.filter(headerSafe),
        fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }),
        async (name, port) => {
          const host = port === undefined ? name : `${name}:${port}`;
          const answer = await send('GET', '/_emulator/state?requests=0', { host });
          const normalized = normalizeHost(host);
          const expected = normalized !== undefined && ACCEPTED.has(normalized) ? 200 : 403;
          expect(answer.status).toBe(expected);
          if (expected === 403) expect(JSON.parse(answer.body)).toMatchObject({ code: '403', success: false });
        },
      ),
      { seed: FUZZ_SEED, numRuns: 150 },
    );
  });
});

const jsonValue = fc.jsonValue({ maxDepth: 4 });
const faultLike = fc.record(
  {
    match: fc.record(
      { operation: fc.constantFrom('token', 'upload-urls', 'upload', 'finance', 'other'), method: fc.string() },
      { requiredKeys: [] },
    ),
    status: fc.oneof(fc.integer({ min: 0, max: 700 }), fc.string()),
    times: fc.oneof(fc.integer({ min: -2, max: 5 }), fc.constant('Infinity'), fc.string()),
    drop: fc.constantFrom('before', 'after', 'never'),
    delayMs: fc.integer({ min: -10, max: 50 }),
    retryAfter: fc.oneof(fc.nat(), fc.string()),
    probability: fc.double({ noNaN: true, min: -1, max: 2 }),
    extra: jsonValue,
  },
  { requiredKeys: [] },
);

describe('control routes under random bodies', () => {
  it('answer 2xx or a 4xx in the spec shape, and a refused body changes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/_emulator/faults', '/_emulator/clock', '/_emulator/reset'),
        fc.oneof(faultLike, jsonValue, fc.record({ advanceMs: fc.oneof(fc.double(), fc.string()) })),
        async (path, body) => {
          emulator.mock.reset();
          const before = emulator.mock.now();
          const answer = await send(
            'POST',
            path,
            { host: '127.0.0.1', 'content-type': 'application/json' },
            JSON.stringify(body),
          );
          expect(answer.status).toBeGreaterThanOrEqual(200);
          expect(answer.status).toBeLessThan(500);
          const parsed = JSON.parse(answer.body) as Record<string, unknown>;
          if (answer.status >= 400) {
            expect(parsed).toMatchObject({ code: String(answer.status), success: false });
            expect(emulator.mock.faults.list()).toEqual([]);
            expect(emulator.mock.now() - before).toBeLessThan(5000);
          }
        },
      ),
      { seed: FUZZ_SEED, numRuns: 200 },
    );
    emulator.mock.reset();
  });
});
