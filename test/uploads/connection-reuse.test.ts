/**
 * Connections of an upload over real HTTP on 127.0.0.1: PUTs reuse keep-alive connections across
 * files, error answers do not cost a connection, and a huge answer is not read to its end.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import net from 'node:net';
import { startEmulator } from 'push-api-client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseTooLargeError, UploadError } from '../../src/errors.js';
import { MAX_PUT_RESPONSE_BYTES } from '../../src/uploads/limits.js';
import { clientFor } from '../support/clients.js';
import { tempDir } from '../support/files.js';

/** Listens on a free loopback port; resolves with its port. */
async function listen(server: Server | net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}

/** Forty small files, half from disk and half from memory. */
async function fortyFiles(dir: Awaited<ReturnType<typeof tempDir>>) {
  const inputs = [];
  for (let i = 0; i < 40; i++) {
    const name = `file-${i}.csv`;
    const data = `id,value\n${i},${'x'.repeat(i * 10)}\n`;
    inputs.push(i % 2 === 0 ? await dir.write(name, data) : { name, data });
  }
  return inputs;
}

/** An emulator whose every address (token, data API, signed addresses) goes through a proxy that counts connections. */
async function emulatorBehindCountingProxy() {
  let target = 0;
  const counts = { connections: 0 };
  const sockets = new Set<net.Socket>();
  const proxy = net.createServer((socket) => {
    counts.connections++;
    const upstream = net.connect(target, '127.0.0.1');
    sockets.add(socket).add(upstream);
    socket.pipe(upstream).pipe(socket);
    for (const [one, other] of [
      [socket, upstream],
      [upstream, socket],
    ] as const) {
      one.on('error', () => other.destroy());
      one.on('close', () => {
        sockets.delete(one);
        other.destroy();
      });
    }
  });
  const port = await listen(proxy);
  const emulator = await startEmulator({ publicUrl: `http://127.0.0.1:${port}` });
  target = Number(new URL(emulator.listenUrl).port);
  return {
    emulator,
    counts,
    async close() {
      await new Promise((resolve) => {
        proxy.close(resolve);
        for (const socket of sockets) socket.destroy();
      });
      await emulator.close();
    },
  };
}

describe('against the emulator, through a proxy that counts connections', () => {
  let files: Awaited<ReturnType<typeof tempDir>>;
  beforeAll(async () => {
    files = await tempDir();
  });
  afterAll(() => files.cleanup());

  it('uploads 40 files at concurrency 4 over at most 4 connections, token and address requests included', async () => {
    const { emulator, counts, close } = await emulatorBehindCountingProxy();
    try {
      const client = clientFor(emulator);
      const report = await client.uploads.upload(emulator.mock.appId, await fortyFiles(files), { concurrency: 4 });
      expect(report.filesUploaded).toBe(40);
      expect(emulator.mock.state.files(emulator.mock.appId)).toHaveLength(40);
      expect(emulator.mock.state.requests.filter((request) => request.operation === 'upload-urls')).toHaveLength(1);
      expect(counts.connections).toBeGreaterThan(0);
      expect(counts.connections).toBeLessThanOrEqual(4);
    } finally {
      await close();
    }
  });

  it("sends the first request after a new token over the token request's own connection", async () => {
    // An origin of its own, so that no connection an earlier test left in fetch's pool is reused.
    const { emulator, counts, close } = await emulatorBehindCountingProxy();
    try {
      const urls = await clientFor(emulator).uploads.getUploadUrls(emulator.mock.appId, ['one.csv']);
      expect(Object.keys(urls)).toEqual(['one.csv']);
      expect(emulator.mock.state.requests.map((request) => request.operation)).toEqual(['token', 'upload-urls']);
      expect(counts.connections).toBe(1);
    } finally {
      await close();
    }
  });
});

/** How a plain storage host answers one PUT, after reading its whole body. */
type StorageAnswer = { status: number; body: string } | { status: number; hugeBody: true };

const HUGE_BODY_BYTES = 256 * 1024 * 1024;

/**
 * A small push service on node:http: token, upload addresses pointing to itself, and a storage
 * host that answers each PUT as `answer` says. Counts connections, and the bytes of huge bodies
 * the socket accepted before the client went away.
 */
async function plainService(answer: (name: string) => StorageAnswer) {
  const counts = { connections: 0, hugeBytesWritten: 0, hugeBodiesFinished: 0 };
  let origin = '';
  const writeHuge = (res: ServerResponse) => {
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let written = 0;
    const more = () => {
      while (written < HUGE_BODY_BYTES && !res.destroyed) {
        written += chunk.length;
        if (!res.write(chunk, () => (counts.hugeBytesWritten += chunk.length))) return void res.once('drain', more);
      }
      if (written >= HUGE_BODY_BYTES && !res.destroyed) {
        counts.hugeBodiesFinished++;
        res.end();
      }
    };
    more();
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', origin);
    req.resume();
    req.on('end', () => {
      if (url.pathname === '/auth/oauth2/token') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            access_token: 'token-1',
            token_type: 'Bearer',
            expires_in: 3600,
            scope: 'https://api.push.test/connector.write',
          }),
        );
        return;
      }
      if (url.pathname.endsWith('/upload')) {
        const names = url.searchParams.getAll('filenames');
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(Object.fromEntries(names.map((name) => [name, `${origin}/storage/${name}?sig=1`]))));
        return;
      }
      const given = answer(decodeURIComponent(url.pathname.slice('/storage/'.length)));
      if ('hugeBody' in given) {
        res.writeHead(given.status, { 'content-type': 'application/xml', 'content-length': String(HUGE_BODY_BYTES) });
        writeHuge(res);
        return;
      }
      res.writeHead(given.status, { 'content-type': 'application/xml', etag: '"e"' });
      res.end(given.body);
    });
  });
  server.on('connection', () => counts.connections++);
  const port = await listen(server);
  origin = `http://127.0.0.1:${port}`;
  const client = clientFor(
    {
      authUrl: `${origin}/auth`,
      baseUrl: origin,
      scopeBase: 'https://api.push.test',
      clientId: 'id',
      clientSecret: 'secret',
    },
    { maxRetries: 0 },
  );
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return { client, counts, close };
}

const ERROR_XML = `<?xml version="1.0"?><Error><Code>InvalidArgument</Code><Message>${'m'.repeat(2000)}</Message></Error>`;

describe('against a plain storage host that counts connections', () => {
  let files: Awaited<ReturnType<typeof tempDir>>;
  beforeAll(async () => {
    files = await tempDir();
  });
  afterAll(() => files.cleanup());

  it('keeps its connections after error answers that carry a body', async () => {
    const service = await plainService((name) =>
      Number(name.match(/\d+/)?.[0]) % 4 === 0 ? { status: 400, body: ERROR_XML } : { status: 200, body: '' },
    );
    try {
      const report = await service.client.uploads.upload('app-1', await fortyFiles(files), { concurrency: 4 });
      expect(report.filesUploaded).toBe(30);
      expect(report.filesFailed).toBe(10);
      const failed = report.files.find((file) => file.status === 'failed');
      expect(failed?.error).toBeInstanceOf(UploadError);
      expect(failed?.error?.status).toBe(400);
      expect(failed?.error?.storageCode).toBe('InvalidArgument');
      expect(service.counts.connections).toBeLessThanOrEqual(4);
    } finally {
      await service.close();
    }
  });

  it.each([
    ['an error answer', 400],
    ['a success answer', 200],
  ])('does not read a huge body of %s to its end', async (_, status) => {
    const service = await plainService((name) =>
      name === 'file-0.csv' ? { status, hugeBody: true } : { status: 200, body: '' },
    );
    try {
      const report = await service.client.uploads.upload('app-1', (await fortyFiles(files)).slice(0, 8), {
        concurrency: 4,
      });
      expect(report.files[0]?.status).toBe('failed');
      if (status === 200) {
        // A storage answer to a PUT is read up to 64 KiB, not the 8 MiB a data API answer may take.
        expect(report.files[0]?.error?.cause).toMatchObject({
          name: 'ResponseTooLargeError',
          limitBytes: MAX_PUT_RESPONSE_BYTES,
        });
        expect(report.files[0]?.error?.cause).toBeInstanceOf(ResponseTooLargeError);
      }
      expect(report.files.slice(1).every((file) => file.status === 'uploaded')).toBe(true);
      // Only what fits in the socket buffers and the read cap left the server: nowhere near the body.
      expect(service.counts.hugeBodiesFinished).toBe(0);
      expect(service.counts.hugeBytesWritten).toBeLessThan(HUGE_BODY_BYTES / 8);
    } finally {
      await service.close();
    }
  });
});
