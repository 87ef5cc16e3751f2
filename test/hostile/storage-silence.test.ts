/**
 * A storage host that takes the PUT and then never answers, or answers one byte at a time: the
 * file fails within the attempt timeout, and the run ends.
 */
import { describe, expect, it } from 'vitest';
import { HOSTILE_APP_ID, useHostileService } from '../support/hostile-service.js';

const start = useHostileService();

describe('a storage host that keeps the connection and never answers', () => {
  it('the PUT fails within the attempt timeout, the file is failed, the run ends', async () => {
    const service = await start(({ route }, res) => {
      if (route !== 'storage') return false;
      // Reads the body (the service took it), then keeps the connection and says nothing.
      res.on('close', () => undefined);
      return true;
    });
    const client = service.client({ timeoutMs: 300, maxRetries: 1, backoff: { initialDelayMs: 0, maxDelayMs: 0 } });
    const started = performance.now();
    const report = await client.uploads
      .upload(HOSTILE_APP_ID, [{ name: 'a.csv', data: 'x'.repeat(1000) }])
      .catch((error: unknown) => (error as { report?: unknown }).report ?? error);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeLessThan(3000);
    const files = (report as { files: { status: string; error?: Error }[] }).files;
    expect(files[0]?.status).toBe('failed');
    expect(files[0]?.error?.message).toMatch(/300 ms|timed? ?out|no response/i);
  });

  it('an answer sent one byte at a time still ends at the attempt timeout', async () => {
    const service = await start(({ route }, res) => {
      if (route !== 'storage') return false;
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('x'), 20);
      res.on('close', () => clearInterval(timer));
      setTimeout(() => {
        clearInterval(timer);
        res.end();
      }, 5000).unref();
      return true;
    });
    const client = service.client({ timeoutMs: 300, maxRetries: 0 });
    const started = performance.now();
    const report = await client.uploads
      .upload(HOSTILE_APP_ID, [{ name: 'a.csv', data: 'x' }])
      .catch((error: unknown) => (error as { report?: unknown }).report ?? error);
    expect(performance.now() - started).toBeLessThan(3000);
    const files = (report as { files: { status: string; error?: Error }[] }).files;
    expect(files[0]?.status).toBe('failed');
    // Its headers came: the message says the answer did not finish, not that none came.
    expect(files[0]?.error?.message).toMatch(/got an answer \(200\) whose body did not finish within 300 ms/);
  });
});
