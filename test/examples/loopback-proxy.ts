/**
 * A small forward proxy on loopback for tests. It answers absolute-form requests
 * (`GET http://host:port/path`) by forwarding them with a `via` header, and CONNECT requests by
 * opening a tunnel. It resolves every `*.invalid` host (RFC 6761: never resolvable) to `target`, so
 * a client can only reach such a host through this proxy: a request that bypassed it would fail.
 */
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';

export const VIA = '1.1 loopback-test-proxy';

export interface LoopbackProxy {
  readonly url: string;
  /** `METHOD http://host/path` of each absolute-form request. */
  readonly requests: string[];
  /** `host:port` of each CONNECT tunnel. */
  readonly tunnels: string[];
  close(): Promise<void>;
}

export async function startLoopbackProxy(target: { host: string; port: number }): Promise<LoopbackProxy> {
  const requests: string[] = [];
  const tunnels: string[] = [];
  const sockets = new Set<Socket>();
  const resolve = (host: string, port: number) => (host.endsWith('.invalid') ? target : { host, port });

  const server = createServer((req: IncomingMessage, res) => {
    const url = new URL(req.url ?? '/');
    if (!req.url?.startsWith('http://')) {
      res.writeHead(400).end('absolute-form requests only');
      return;
    }
    requests.push(`${req.method} ${url.origin}${url.pathname}`);
    const to = resolve(url.hostname, Number(url.port) || 80);
    const upstream = httpRequest(
      {
        host: to.host,
        port: to.port,
        method: req.method,
        path: `${url.pathname}${url.search}`,
        headers: { ...req.headers, via: VIA },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    tunnels.push(req.url ?? '');
    const [host = '', port = '443'] = (req.url ?? '').split(/:(?=\d+$)/);
    const to = resolve(host, Number(port));
    const upstream = connect(to.port, to.host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
  });

  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    tunnels,
    close: () =>
      new Promise<void>((done) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}
