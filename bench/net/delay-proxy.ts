/**
 * A TCP proxy on loopback that makes a loopback server look far away: each direction of each
 * connection gets a one-way delay and its own bandwidth cap (bench/net/link.ts), and a new
 * connection carries nothing until a round trip has passed, as a TCP handshake would cost. It
 * speaks no HTTP, so it changes nothing in the requests; HTTP keep-alive, pipelining and the
 * number of connections a client opens all show up in the timings as they would on a real path.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { Link, type LinkFault } from './link.js';

export interface DelayProxyOptions {
  /**
   * Where connections are forwarded: a loopback port, or a function read at each connection (a
   * server that must be told the proxy's address before it listens).
   */
  targetPort: number | (() => number);
  /** Delay each way, in milliseconds (the round trip is twice this). @default 25 */
  oneWayDelayMs?: number;
  /** Cap of each direction of each connection, in bytes per second; Infinity for none. @default 50e6 */
  bytesPerSecond?: number;
  /** Round trips a new connection waits before carrying data (1 for TCP, 2 with a TLS 1.3 handshake). @default 1 */
  handshakeRoundTrips?: number;
  /**
   * The faults of the `connection`-th connection accepted (from 0), each way: a test's seeded
   * choice of which connections reset or stall. @default none
   */
  faultFor?: (connection: number) => ConnectionFaults | undefined;
}

/** What goes wrong on one connection: towards the server (`up`), and back (`down`). */
export interface ConnectionFaults {
  up?: LinkFault;
  down?: LinkFault;
}

export interface ProxyStats {
  /** Connections accepted since the start or the last reset. */
  connections: number;
  /** Bytes carried towards the server, and back. */
  bytesUp: number;
  bytesDown: number;
  /** Faults (`faultFor`) that struck: a reset that fired, a stall whose bytes were held. */
  faultsStruck: number;
  /** CPU time of this process (the proxy's, when it runs alone in one), in milliseconds. */
  cpuMs: number;
}

export interface RunningProxy {
  /** `http://127.0.0.1:{port}`. */
  readonly url: string;
  readonly port: number;
  stats(): ProxyStats;
  /** Closes every open connection and zeroes the counters: the next run starts with no warm connection. */
  reset(): void;
  close(): Promise<void>;
}

export const PROXY_DEFAULTS = { oneWayDelayMs: 25, bytesPerSecond: 50e6, handshakeRoundTrips: 1 } as const;

const LOOPBACK = '127.0.0.1';

export async function startDelayProxy(options: DelayProxyOptions): Promise<RunningProxy> {
  const delayMs = options.oneWayDelayMs ?? PROXY_DEFAULTS.oneWayDelayMs;
  const bytesPerSecond = options.bytesPerSecond ?? PROXY_DEFAULTS.bytesPerSecond;
  const handshakeRoundTrips = options.handshakeRoundTrips ?? PROXY_DEFAULTS.handshakeRoundTrips;
  // What a TCP window must hold to keep the path full (bandwidth × round trip), plus a socket
  // buffer's worth, so that the cap and not the window sets a long transfer's rate.
  const queueLimitBytes = Number.isFinite(bytesPerSecond)
    ? Math.ceil((bytesPerSecond * 2 * delayMs) / 1000) + 256 * 1024
    : 4 * 1024 * 1024;
  const open = new Set<Socket>();
  const live = new Set<{ up: Link; down: Link }>();
  let stats: ProxyStats = { connections: 0, bytesUp: 0, bytesDown: 0, faultsStruck: 0, cpuMs: 0 };
  let cpuAtReset = process.cpuUsage();

  function accept(client: Socket): void {
    const faults = options.faultFor?.(stats.connections);
    stats.connections++;
    const acceptedAt = performance.now();
    const port = typeof options.targetPort === 'function' ? options.targetPort() : options.targetPort;
    const server = connect({ host: LOOPBACK, port, allowHalfOpen: true, noDelay: true });
    // An RST both ways, as a middlebox that drops the flow sends: neither end gets a clean FIN.
    const onReset = () => {
      for (const socket of [client, server]) if (!socket.destroyed) socket.resetAndDestroy();
    };
    const pair = {
      up: new Link(client, server, {
        delayMs,
        bytesPerSecond,
        queueLimitBytes,
        openAt: acceptedAt + 2 * delayMs * handshakeRoundTrips,
        ...(faults?.up !== undefined && { fault: faults.up, onReset }),
      }),
      down: new Link(server, client, {
        delayMs,
        bytesPerSecond,
        queueLimitBytes,
        ...(faults?.down !== undefined && { fault: faults.down, onReset }),
      }),
    };
    live.add(pair);
    let closed = 0;
    for (const socket of [client, server]) {
      open.add(socket);
      // A reset on either side resets the other at once; a clean end (FIN) travels through its link.
      socket.on('error', () => {
        client.destroy();
        server.destroy();
      });
      socket.once('close', () => {
        open.delete(socket);
        if (++closed < 2) return;
        pair.up.stop();
        pair.down.stop();
        // A pair closed by reset() belongs to the counters reset() cleared.
        if (!live.delete(pair)) return;
        stats.bytesUp += pair.up.bytes;
        stats.bytesDown += pair.down.bytes;
        stats.faultsStruck += Number(pair.up.faulted) + Number(pair.down.faulted);
      });
    }
  }

  const listener: Server = createServer({ allowHalfOpen: true, noDelay: true }, accept);
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(0, LOOPBACK, resolve);
  });
  const address = listener.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no port');
  return {
    url: `http://${LOOPBACK}:${address.port}`,
    port: address.port,
    stats: () => {
      // Open connections count too: a pair adds its bytes to the totals when it closes.
      let { bytesUp, bytesDown, faultsStruck } = stats;
      for (const { up, down } of live) {
        bytesUp += up.bytes;
        bytesDown += down.bytes;
        faultsStruck += Number(up.faulted) + Number(down.faulted);
      }
      const cpu = process.cpuUsage(cpuAtReset);
      const cpuMs = (cpu.user + cpu.system) / 1000;
      return { connections: stats.connections, bytesUp, bytesDown, faultsStruck, cpuMs };
    },
    reset() {
      for (const socket of open) socket.destroy();
      live.clear();
      stats = { connections: 0, bytesUp: 0, bytesDown: 0, faultsStruck: 0, cpuMs: 0 };
      cpuAtReset = process.cpuUsage();
    },
    close() {
      for (const socket of open) socket.destroy();
      return new Promise<void>((resolve) => listener.close(() => resolve()));
    },
  };
}
