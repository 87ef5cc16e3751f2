/**
 * A TCP proxy on 127.0.0.1 whose uplink (client to server) is one bottleneck shared by every
 * connection, as a home or office uplink is: bytes reach the server at `bytesPerSecond` in all,
 * in the order they were sent. It reads from clients at once and holds what the link has not
 * carried yet (a router's buffer), so a client sees its bodies handed over long before the server
 * has them. The way back is not limited. Closed after each test.
 */
import { once } from 'node:events';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { afterEach } from 'vitest';

export interface SharedUplink {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  port: number;
  /** Where connections go: set before the first one comes (a server that must know the proxy's address first). */
  forwardTo(port: number): void;
}

/** Registers the afterEach that closes the proxies, and returns `start(bytesPerSecond)`. */
export function useSharedUplink(): (bytesPerSecond: number) => Promise<SharedUplink> {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });
  return async (bytesPerSecond) => {
    let targetPort = 0;
    const sockets = new Set<Socket>();
    const timers = new Set<NodeJS.Timeout>();
    // When the shared link has put every byte handed to it so far on the wire.
    let busyUntil = 0;
    const server = createServer({ noDelay: true }, (client) => {
      const upstream = connect({ host: '127.0.0.1', port: targetPort, noDelay: true });
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.on('data', (chunk: Buffer) => {
        busyUntil = Math.max(performance.now(), busyUntil) + (chunk.length * 1000) / bytesPerSecond;
        const timer = setTimeout(() => {
          timers.delete(timer);
          if (!upstream.destroyed) upstream.write(chunk);
        }, busyUntil - performance.now());
        timers.add(timer);
      });
      client.on('end', () => upstream.end());
      upstream.pipe(client);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    closers.push(async () => {
      for (const timer of timers) clearTimeout(timer);
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    });
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}`,
      port,
      forwardTo: (target) => {
        targetPort = target;
      },
    };
  };
}
