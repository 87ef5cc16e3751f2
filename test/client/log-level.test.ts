import { ConfigurationError, type PushClientOptions } from 'push-api-client';
import { createPushApiHandler } from 'push-api-client/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clientFor } from '../support/clients.js';
import { recordingLogger } from '../support/recorders.js';
import { SAMPLE_RECORD } from '../support/records.js';

const record = SAMPLE_RECORD;

function setup(options: PushClientOptions = {}) {
  const emulator = createPushApiHandler();
  const mock = {
    ...emulator,
    authUrl: 'https://auth.push.test',
    baseUrl: 'https://api.push.test',
    scopeBase: 'https://api.push.test',
    clientId: 'demo-client',
    clientSecret: 'demo-secret-do-not-use-in-production',
  };
  return { emulator, mock, client: clientFor(mock, options) };
}

/** What the built-in logger wrote (it writes every level through console.error, to stderr). */
function captureStderr(): { lines: string[] } {
  const lines: string[] = [];
  vi.spyOn(console, 'error').mockImplementation((line: unknown) => void lines.push(String(line)));
  return { lines };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('logging on demand', () => {
  it('PUSH_LOG=debug logs one line per attempt to stderr, without secrets or tokens', async () => {
    const stderr = captureStderr();
    const { emulator, client } = setup({ env: { PUSH_LOG: 'debug' } });
    await client.finance.publish('demo-app', [record]);
    const attempts = stderr.lines.filter((line) => / debug push-api-client request /.test(line));
    expect(attempts.map((line) => JSON.parse(line.slice(line.indexOf('{'))))).toEqual([
      expect.objectContaining({ operation: 'token', method: 'POST', status: 200, attempt: 1 }),
      expect.objectContaining({ operation: 'finance', method: 'POST', status: 200, attempt: 1 }),
    ]);
    expect(stderr.lines[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z debug /);
    expect(emulator.state.tokens).toHaveLength(1);
    const token = emulator.state.tokens[0]?.token ?? 'missing';
    for (const line of stderr.lines) {
      expect(line).not.toContain('demo-secret-do-not-use-in-production');
      expect(line).not.toContain(token);
    }
  });

  it('PUSH_LOG=warn shows the retry of a 429 and no attempt lines', async () => {
    const stderr = captureStderr();
    const { emulator, client } = setup({ env: { PUSH_LOG: 'WARN' } });
    emulator.faults.add({ match: { operation: 'finance' }, status: 429, retryAfter: 0, times: 1 });
    const report = await client.finance.publish('demo-app', [record]);
    expect(report.recordsSent).toBe(1);
    expect(stderr.lines).toHaveLength(1);
    expect(stderr.lines[0]).toMatch(/ warn push-api-client retrying \{.*"operation":"finance".*"status":429/);
  });

  it('logLevel filters a given logger, and wins over PUSH_LOG', async () => {
    const logger = recordingLogger();
    const { emulator, client } = setup({ logger, logLevel: 'warn', env: { PUSH_LOG: 'debug' } });
    emulator.faults.add({ match: { operation: 'finance' }, status: 503, times: 1 });
    await client.finance.publish('demo-app', [record]);
    expect(logger.lines.map((line) => `${line.level} ${line.message}`)).toEqual(['warn push-api-client retrying']);
  });

  it('a logger with no level gets every line, and off silences it', async () => {
    const all = recordingLogger();
    await setup({ logger: all }).client.finance.publish('demo-app', [record]);
    expect(all.lines.filter((line) => line.level === 'debug').length).toBeGreaterThanOrEqual(2);
    const none = recordingLogger();
    await setup({ logger: none, env: { PUSH_LOG: 'off' } }).client.finance.publish('demo-app', [record]);
    expect(none.lines).toEqual([]);
  });

  it('a logger whose methods are async and reject never fails a request, nor leaves an unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      let calls = 0;
      const rejecting = async () => {
        calls += 1;
        throw new Error('log shipper down');
      };
      const logger = { debug: rejecting, info: rejecting, warn: rejecting, error: rejecting };
      const { emulator, client } = setup({ logger });
      emulator.faults.add({ match: { operation: 'finance' }, status: 503, retryAfter: 0, times: 1 });
      const report = await client.finance.publish('demo-app', [record]);
      expect(report.recordsSent).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 20)); // unhandled rejections are told after a turn
      expect(calls).toBeGreaterThanOrEqual(3); // token and finance attempts, and the retry
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('an unknown PUSH_LOG value is a ConfigurationError naming the variable and the levels', () => {
    expect(() => setup({ env: { PUSH_LOG: 'verbose' } })).toThrow(ConfigurationError);
    expect(() => setup({ env: { PUSH_LOG: 'verbose' } })).toThrow(/PUSH_LOG.*debug, info, warn, error, off/);
  });
});
