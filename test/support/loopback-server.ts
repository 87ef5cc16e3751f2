/** Real HTTP servers on 127.0.0.1 for transport tests, closed after each test. */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { afterEach } from 'vitest';

export type LoopbackHandler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/**
 * Registers an afterEach that closes every server started in the test, and returns `serve`: it
 * starts a server on a free port that reads each request body in full, hands it to `handler`,
 * and resolves to the server's base URL. `serve.servers` holds the servers still open.
 */
export function useLoopbackServers(): ((handler: LoopbackHandler) => Promise<string>) & { servers: Server[] } {
  const servers: Server[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
  const serve = async (handler: LoopbackHandler): Promise<string> => {
    // Headers up to 128 KiB (Node's default is 16): tests send tokens a hostile endpoint made large.
    const server = createServer({ maxHeaderSize: 128 * 1024 }, (req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => handler(req, res, body));
    });
    servers.push(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  return Object.assign(serve, { servers });
}

/** A port on `host` where nothing listens (taken, then freed): a connection to it is refused. */
export async function closedPort(host = '127.0.0.1'): Promise<number> {
  const probe = createNetServer().listen(0, host);
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
