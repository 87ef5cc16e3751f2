/** The bench sink's additions for the network rows: a server time per batch, and storage addresses through a proxy. */
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningSink, startSink } from '../../bench/sink/sink-server.js';

let sink: RunningSink | undefined;
afterEach(async () => {
  await sink?.close();
  sink = undefined;
});

const records = (count: number) =>
  JSON.stringify({ records: Array.from({ length: count }, (_, i) => ({ created: i, amount: 1, note: '"created":' })) });

describe('the bench sink', () => {
  it('answers a finance batch after its base time plus its time per record', async () => {
    sink = await startSink({ serverTime: { baseMs: 10, perRecordMs: 40 } });
    const url = `${sink.url}/services/push/v1/customer/apps/a/finance`;
    await (await fetch(url, { method: 'POST', body: records(0) })).arrayBuffer();
    const started = performance.now();
    const response = await fetch(url, { method: 'POST', body: records(2) });
    const ms = performance.now() - started;
    expect(response.status).toBe(200);
    // 10 ms + 2 × 40 ms; the key spelled inside each string value is escaped there, and not counted.
    expect(ms).toBeGreaterThanOrEqual(89);
    expect(ms).toBeLessThan(10 + 3 * 40);
  });

  it('hands out storage addresses on the loopback host the client asked, and on its own address otherwise', async () => {
    sink = await startSink();
    const ask = async (host: string) => {
      const { request } = await import('node:http');
      return new Promise<Record<string, string>>((resolve, reject) => {
        const req = request(`${sink?.url}/services/push/v1/customer/apps/a/upload?filenames=f.csv`, {
          headers: { host },
        });
        req.on('response', (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve(JSON.parse(body) as Record<string, string>));
        });
        req.on('error', reject).end();
      });
    };
    expect((await ask('127.0.0.1:4321'))['f.csv']).toBe('http://127.0.0.1:4321/storage/f.csv?signature=bench');
    // A Host from elsewhere never turns the sink into a pointer off loopback.
    expect((await ask('evil.example:80'))['f.csv']).toBe(`${sink.url}/storage/f.csv?signature=bench`);
  });
});
