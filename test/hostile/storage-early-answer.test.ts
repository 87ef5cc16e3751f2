/**
 * A storage host that answers a PUT with 2xx before it has taken the whole body, over real HTTP on
 * 127.0.0.1: a file whose bytes were not all handed to the network cannot have been stored whole,
 * so it is failed, never counted as uploaded. A host that reads the body first is the control.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UploadError } from 'push-api-client';
import { afterEach, describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { patternBytes, tempDir } from '../support/files.js';

/** Larger than what loopback's socket buffers hold, so that a host that stops reading stops the body. */
const SIZE = 24 * 1024 * 1024;

type StorageAnswer = (req: IncomingMessage, res: ServerResponse) => void;

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** Token, upload addresses pointing to itself, and a storage host that answers PUTs with `storage`. */
async function pushService(storage: StorageAnswer) {
  const stored: { name: string; bytesRead: number }[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', origin);
    const json = (body: unknown) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.method === 'PUT') {
      const entry = { name: url.pathname, bytesRead: 0 };
      stored.push(entry);
      req.on('data', (chunk: Buffer) => {
        entry.bytesRead += chunk.length;
      });
      storage(req, res);
      return;
    }
    req.resume();
    if (url.pathname === '/oauth2/token') json({ access_token: 'token-1', token_type: 'Bearer', expires_in: 3600 });
    else
      json(
        Object.fromEntries(url.searchParams.getAll('filenames').map((name) => [name, `${origin}/files/${name}?sig=1`])),
      );
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = clientFor(
    { clientId: 'c', clientSecret: 's', authUrl: origin, baseUrl: origin, scopeBase: origin },
    { scopes: ['push.write'], maxRetries: 0, timeoutMs: 10_000 },
  );
  return { client, stored };
}

describe('a storage host that answers 2xx before taking the whole body', () => {
  it('fails a file from disk whose bytes were not all sent, naming how many were', async () => {
    const files = await tempDir();
    try {
      const file = await files.write('big.bin', patternBytes(SIZE));
      const { client, stored } = await pushService((req, res) => {
        req.pause(); // takes nothing more: the body stops in the socket's buffers
        res.writeHead(200, { etag: '"early"', 'content-length': '0' }).end();
      });
      const report = await client.uploads.upload('app-1', [file]);
      const [result] = report.files;
      expect(result?.status).toBe('failed');
      expect(result?.error).toBeInstanceOf(UploadError);
      expect(result?.error?.message).toMatch(/answered 200 after \d+ of the 25165824 bytes of "big\.bin" were sent/);
      expect(report.filesUploaded).toBe(0);
      expect(report.bytesUploaded).toBe(0);
      expect(stored[0]?.bytesRead ?? 0).toBeLessThan(SIZE);
    } finally {
      await files.cleanup();
    }
  });

  it('counts as uploaded a file the host read to its end before answering', async () => {
    const files = await tempDir();
    try {
      const file = await files.write('big.bin', patternBytes(SIZE));
      const { client, stored } = await pushService((req, res) => {
        req.on('end', () => res.writeHead(200, { etag: '"whole"', 'content-length': '0' }).end());
      });
      const report = await client.uploads.upload('app-1', [file]);
      expect(report.files[0]).toMatchObject({ status: 'uploaded', bytes: SIZE, etag: '"whole"' });
      expect(stored[0]?.bytesRead).toBe(SIZE);
    } finally {
      await files.cleanup();
    }
  });
});
