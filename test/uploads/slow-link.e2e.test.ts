/**
 * A file from disk over a slow link, on 127.0.0.1: the storage host reads the PUT's body at a fixed
 * pace, so the sockets' buffers fill and the body moves at that pace. A transfer that keeps moving
 * must never meet the stall timeout, even once the last byte has left the file and only the
 * buffers still hold the rest; and progress follows what the transport takes, not what was read.
 */
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PushClient } from 'push-api-client';
import { afterEach, describe, expect, it } from 'vitest';

const MiB = 1024 * 1024;
/** The link's pace, in bytes per second. */
const PACE = 1.5 * MiB;
const TIMEOUT_MS = 1_500;

let server: Server | undefined;
let dir: string | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  if (server) await new Promise((resolve) => server?.close(resolve));
  if (dir) await rm(dir, { recursive: true, force: true });
  server = undefined;
  dir = undefined;
});

/** Token and addresses at once; the PUT's body read at PACE, then answered. */
async function slowStorage(
  host: 'paced' | 'silent' = 'paced',
): Promise<{ url: string; received: () => number; puts: () => number }> {
  let received = 0;
  let puts = 0;
  let base = '';
  server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/oauth2/token') {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: 'slow-link-token', token_type: 'Bearer', expires_in: 3600 }));
      return;
    }
    if (req.method === 'GET' && url.pathname.endsWith('/upload')) {
      const names = url.searchParams.getAll('filenames');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(Object.fromEntries(names.map((name) => [name, `${base}/files/${name}?sig=1`]))));
      return;
    }
    if (req.method === 'PUT' && host === 'silent') {
      puts++;
      req.on('data', (chunk: Buffer) => {
        received += chunk.length;
      });
      return; // takes every byte, never answers
    }
    if (req.method === 'PUT') {
      puts++;
      // Each chunk is taken only after the time the link needs for it: the socket is not read meanwhile.
      try {
        for await (const chunk of req) {
          received += (chunk as Buffer).length;
          await sleep(((chunk as Buffer).length / PACE) * 1000);
        }
      } catch {
        return; // the client gave up (the old behaviour this test guards against)
      }
      res.writeHead(200, { etag: '"1"' }).end();
      return;
    }
    res.writeHead(404).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: base, received: () => received, puts: () => puts };
}

/** A client of the host at `url`, with one attempt per file. */
function clientOf(url: string, timeoutMs: number): PushClient {
  return new PushClient({
    clientId: 'c',
    clientSecret: 's',
    authUrl: url,
    baseUrl: url,
    scopeBase: url,
    timeoutMs,
    maxRetries: 0,
    env: {},
  });
}

describe('an upload over a slow link', () => {
  it('a file that keeps moving is uploaded once, whatever the buffers hold after its last byte left the disk', async () => {
    const storage = await slowStorage();
    dir = await mkdtemp(path.join(tmpdir(), 'push-slow-link-'));
    const file = path.join(dir, 'big.bin');
    const size = 12 * MiB;
    await writeFile(file, Buffer.alloc(size, 7));
    const client = clientOf(storage.url, TIMEOUT_MS);
    // How far ahead of the link the progress ran: the bytes reported beyond what the host had read.
    let mostAhead = 0;
    const report = await client.uploads.upload('app-1', [file], {
      onProgress: ({ bytes }) => {
        mostAhead = Math.max(mostAhead, bytes - storage.received());
      },
    });
    // The file's error, if any, in the failure message: under load this is where a timing shows.
    expect(report.files[0], String(report.files[0]?.error)).toMatchObject({ status: 'uploaded', attempts: 1 });
    expect(storage.received()).toBe(size);
    expect(storage.puts()).toBe(1);
    // The sockets' buffers lie between what the transport took and what the host read; no more.
    expect(mostAhead).toBeLessThan(size / 2);
  }, 30_000);

  it('a slow source is no slow link: once its last byte is out, a host that never answers fails it at timeoutMs', async () => {
    const storage = await slowStorage('silent');
    const chunks = 20;
    let lastChunkAt = 0;
    // A caller's stream that yields 64 KiB every 100 ms: the link is fast, the source is not.
    async function* trickle(): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < chunks; i++) {
        await sleep(100);
        if (i === chunks - 1) lastChunkAt = performance.now();
        yield new Uint8Array(64 * 1024);
      }
    }
    const client = clientOf(storage.url, 1_000);
    const report = await client.uploads
      .upload('app-1', [{ name: 'trickle.bin', stream: trickle(), size: chunks * 64 * 1024 }])
      .catch((error: unknown) => (error as { report?: unknown }).report ?? error);
    const failedAfter = performance.now() - lastChunkAt;
    const files = (report as { files: { status: string; error?: Error }[] }).files;
    expect(files[0]?.status).toBe('failed');
    expect(files[0]?.error?.message).toMatch(/no response within 1\d{3} ms/);
    // timeoutMs and no more: the two seconds the source took are no grace.
    expect(failedAfter).toBeLessThan(1_800);
  }, 30_000);
});
