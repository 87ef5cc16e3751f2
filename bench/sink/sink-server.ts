/**
 * The minimal loopback sink: stands in for the token service, the data API and the storage host,
 * doing as little as possible so that the client, not the server, is what gets measured.
 * - `POST …/oauth2/token` answers a valid bearer token;
 * - `POST …/finance` drains the body and answers `{"success":true}` (counting records on request),
 *   after a server time per batch when one is set;
 * - `GET …/upload?filenames=…` answers addresses under `/storage/` on the server the client reached
 *   (the loopback `Host` it asked, so that addresses lead back through a proxy in front);
 * - `PUT /storage/…` needs Content-Length, counts the bytes without keeping them, answers 200.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { emptyStats, type ServerTime, type SinkStats } from './protocol.js';

export interface RunningSink {
  url: string;
  stats: SinkStats;
  reset(): void;
  close(): Promise<void>;
}

const TOKEN_BODY = JSON.stringify({ access_token: 'bench-token', token_type: 'Bearer', expires_in: 3600 });
const SUCCESS_BODY = JSON.stringify({ success: true });

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Reads a body to the end, counting its bytes; keeps the chunks only when `keep` says so. */
function drain(req: IncomingMessage, keep: boolean): Promise<{ bytes: number; chunks: Buffer[] }> {
  return new Promise((resolve, reject) => {
    let bytes = 0;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (keep) chunks.push(chunk);
    });
    req.on('end', () => resolve({ bytes, chunks }));
    req.on('error', reject);
  });
}

/** A record's one required key, written once per record in any body JSON.stringify makes. */
const RECORD_KEY = Buffer.from('"created":');

/** Records in a finance body, without parsing it: the server time must not cost the sink CPU. */
function countRecordKeys(body: Buffer): number {
  let count = 0;
  for (let at = body.indexOf(RECORD_KEY); at >= 0; at = body.indexOf(RECORD_KEY, at + RECORD_KEY.length)) count++;
  return count;
}

/** `host:port` of a loopback address, else undefined: an address the sink hands out never leaves loopback. */
function loopbackHost(host: string | undefined): string | undefined {
  return host !== undefined && /^(127\.0\.0\.1|localhost|\[::1\]):\d{1,5}$/.test(host) ? host : undefined;
}

export interface SinkOptions {
  countRecords?: boolean;
  serverTime?: ServerTime;
}

export async function startSink(options: SinkOptions = {}): Promise<RunningSink> {
  let stats = emptyStats();
  let origin = '';

  async function finance(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { serverTime } = options;
    const { bytes, chunks } = await drain(req, options.countRecords === true || serverTime !== undefined);
    stats.financeRequests++;
    stats.bodyBytes += bytes;
    if (options.countRecords) {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { records?: unknown[] };
      stats.financeRecords += body.records?.length ?? 0;
    }
    if (serverTime) await sleep(serverTime.baseMs + serverTime.perRecordMs * countRecordKeys(Buffer.concat(chunks)));
    send(res, 200, SUCCESS_BODY);
  }

  async function upload(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const declared = req.headers['content-length'];
    if (declared === undefined) {
      stats.uploadErrors++;
      res.writeHead(411, { connection: 'close' }).end();
      return;
    }
    const { bytes } = await drain(req, false);
    if (bytes !== Number(declared)) {
      stats.uploadErrors++;
      send(res, 400, '{"error":"length mismatch"}');
      return;
    }
    stats.uploads++;
    stats.uploadBytes += bytes;
    res.writeHead(200, { etag: '"bench"', 'content-length': 0 }).end();
  }

  function uploadUrls(req: IncomingMessage, url: URL, res: ServerResponse): void {
    stats.uploadUrlRequests++;
    const host = loopbackHost(req.headers.host);
    const storage = host === undefined ? origin : `http://${host}`;
    const addresses: Record<string, string> = {};
    for (const name of url.searchParams.getAll('filenames')) {
      addresses[name] = `${storage}/storage/${encodeURIComponent(name)}?signature=bench`;
    }
    send(res, 200, JSON.stringify(addresses));
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', origin);
    if (req.method === 'POST' && url.pathname.endsWith('/oauth2/token')) {
      await drain(req, false);
      stats.tokenRequests++;
      return send(res, 200, TOKEN_BODY);
    }
    if (req.method === 'POST' && url.pathname.endsWith('/finance')) return finance(req, res);
    if (req.method === 'GET' && url.pathname.endsWith('/upload')) return uploadUrls(req, url, res);
    if (req.method === 'PUT' && url.pathname.startsWith('/storage/')) return upload(req, res);
    await drain(req, false);
    send(res, 404, '{"error":"no such path"}');
  }

  const server: Server = createServer((req, res) => {
    route(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: origin,
    get stats() {
      return stats;
    },
    reset() {
      stats = emptyStats();
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
