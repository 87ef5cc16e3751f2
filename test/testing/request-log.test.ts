/**
 * The request log holds a bounded part of each request and a bounded total, whatever whoever
 * reaches the emulator sends: many headers, long paths and queries, and floods of them.
 */
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { estimateEntryBytes, LOG_ENTRY_LIMITS } from '../../src/testing/request-log.js';
import { send } from '../support/raw-http.js';

let emulator: RunningEmulator | undefined;
afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

const LONG_TARGET = `/x${'A'.repeat(7000)}?q=${'B'.repeat(7000)}`;

function lastEntry(running: RunningEmulator) {
  const entry = running.mock.state.requests.at(-1);
  if (entry === undefined) throw new Error('nothing was logged');
  return entry;
}

describe('one request-log entry', () => {
  it('keeps at most its header limits of a request with 900 headers, counting those left out', async () => {
    emulator = await startEmulator();
    const port = Number(new URL(emulator.url).port);
    // About 8 KB, under every Node's 16 KiB limit on a request head (Node 22 answers 431 past it);
    // written by hand, as the hostile client would.
    let headers = '';
    for (let i = 0; i < 900; i++) headers += `h${i}:x\r\n`;
    const head = `GET /nope HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${headers}Connection: close\r\n\r\n`;
    const statusLine = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(head));
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        text += chunk;
      });
      socket.on('end', () => resolve(text.split('\r\n')[0] ?? ''));
      socket.on('error', reject);
    });
    expect(statusLine).toBe('HTTP/1.1 404 Not Found');
    const entry = lastEntry(emulator);
    const kept = Object.keys(entry.headers).length;
    expect(kept).toBe(LOG_ENTRY_LIMITS.headers);
    // The 900, with Host and Connection, less those kept.
    expect(entry.truncated?.headersLeftOut).toBe(902 - LOG_ENTRY_LIMITS.headers);
    expect(estimateEntryBytes(entry)).toBeLessThan(8 * 1024);
  });

  it('cuts a long path and query value to their limits, ending each with a marker; an ordinary request stays whole', async () => {
    emulator = await startEmulator();
    await send(emulator.url, { path: LONG_TARGET });
    const entry = lastEntry(emulator);
    const pathMarker = `...[cut ${7002 - LOG_ENTRY_LIMITS.pathChars} chars]`;
    expect(entry.path).toBe(`/x${'A'.repeat(LOG_ENTRY_LIMITS.pathChars - 2)}${pathMarker}`);
    expect(entry.url).toBe(`${emulator.url}${entry.path}`);
    expect(entry.query.q).toEqual([
      `${'B'.repeat(LOG_ENTRY_LIMITS.queryValueChars)}...[cut ${7000 - LOG_ENTRY_LIMITS.queryValueChars} chars]`,
    ]);
    expect(entry.truncated).toEqual({ headersLeftOut: 0, queryValuesLeftOut: 0 });
    expect(estimateEntryBytes(entry)).toBeLessThan(16 * 1024);

    // An address request as long as the SDK sends, with its usual headers.
    const names = Array.from({ length: 200 }, (_, i) => `filenames=file-${i}.csv`).join('&');
    await send(`${emulator.url}/services/push/v1/customer/apps/demo-app/upload?${names}`, {
      headers: { 'user-agent': 'push-api-client/test' },
    });
    const ordinary = lastEntry(emulator);
    expect(ordinary.query.filenames).toHaveLength(200);
    expect(ordinary.headers['user-agent']).toBe('push-api-client/test');
    expect(ordinary.truncated).toBeUndefined();
  });
});

describe('the whole request log', () => {
  it('stays under maxRequestLogBytes through a flood of large requests, keeping the newest', async () => {
    const budget = 256 * 1024;
    emulator = await startEmulator({ maxRequestLogBytes: budget });
    const port = new URL(emulator.url).port;
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    const get = () =>
      new Promise<string>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: LONG_TARGET, agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(String(res.headers['x-request-id'])));
        });
        req.on('error', reject);
        req.end();
      });
    let last = '';
    try {
      for (let round = 0; round < 25; round++) last = (await Promise.all(Array.from({ length: 8 }, get))).at(-1) ?? '';
      last = await get();
    } finally {
      agent.destroy();
    }
    const entries = emulator.mock.state.requests;
    const bytes = entries.reduce((sum, entry) => sum + estimateEntryBytes(entry), 0);
    expect(bytes).toBeLessThanOrEqual(budget);
    expect(entries.length).toBeGreaterThan(10);
    expect(entries.length).toBeLessThan(201);
    expect(entries.at(-1)?.id).toBe(last);
  });
});
