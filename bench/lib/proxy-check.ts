/**
 * The delay proxy measured against a loopback echo server, so that its own cost is known next to
 * the rows it serves: the round trip of one byte (should be the configured delay, plus little) and
 * one connection's throughput (should be the cap), through the configured proxy; and the echo
 * throughput of many connections at once through a proxy with no delay and no cap, against the
 * same connections made directly: the proxy's ceiling, which must sit well above what the rows ask.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { ProxyChildConfig } from '../net/protocol.js';
import { type ProxyProcess, startProxyProcess } from './proxy-process.js';
import { makeRow, type Row } from './row.js';
import { median, ratio } from './stats.js';

const LOOPBACK = '127.0.0.1';
const CHUNK = Buffer.alloc(64 * 1024, 0x61);

async function echoServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer({ noDelay: true }, (socket) => {
    sockets.add(socket);
    socket.on('error', () => socket.destroy());
    socket.once('close', () => sockets.delete(socket));
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, LOOPBACK, resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the echo server has no port');
  return {
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

async function open(port: number): Promise<Socket> {
  const socket = connect({ host: LOOPBACK, port, noDelay: true });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return socket;
}

/** Median round trip of a one-byte echo on a connection that is already open. */
async function pingMs(port: number, pings: number): Promise<number> {
  const socket = await open(port);
  const times: number[] = [];
  try {
    // The first echo waits for the emulated handshake: not counted.
    for (let i = 0; i <= pings; i++) {
      const started = performance.now();
      const answered = new Promise((resolve) => socket.once('data', resolve));
      socket.write('x');
      await answered;
      if (i > 0) times.push(performance.now() - started);
    }
  } finally {
    socket.destroy();
  }
  return median(times);
}

/** Echoes `bytes` on each of `connections` at once; milliseconds from the first connect to the last byte back. */
async function echoMs(port: number, connections: number, bytes: number): Promise<number> {
  const one = async () => {
    const socket = await open(port);
    let received = 0;
    const done = new Promise<void>((resolve, reject) => {
      socket.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received >= bytes) resolve();
      });
      socket.once('error', reject);
      socket.once('close', () => (received >= bytes ? resolve() : reject(new Error('echo closed early'))));
    });
    for (let sent = 0; sent < bytes; sent += CHUNK.length) {
      if (!socket.write(CHUNK)) await new Promise((resolve) => socket.once('drain', resolve));
    }
    await done;
    socket.destroy();
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: connections }, one));
  return performance.now() - started;
}

async function withProxy<T>(config: ProxyChildConfig, use: (proxy: ProxyProcess, port: number) => Promise<T>) {
  const proxy = await startProxyProcess(config);
  try {
    return await use(proxy, Number(new URL(proxy.url).port));
  } finally {
    await proxy.close();
  }
}

export async function proxyCheckRows(benchmark: string, config: Omit<ProxyChildConfig, 'targetPort'>, quick: boolean) {
  const echo = await echoServer();
  const connections = quick ? 8 : 16;
  const bytes = (quick ? 4 : 16) * 2 ** 20;
  try {
    const targetPort = echo.port;
    const { rtt, oneMs } = await withProxy({ ...config, targetPort }, async (_proxy, port) => ({
      rtt: await pingMs(port, quick ? 10 : 30),
      oneMs: await echoMs(port, 1, bytes),
    }));
    const bare = { targetPort, oneWayDelayMs: 0, bytesPerSecond: null, handshakeRoundTrips: 0 };
    const { viaProxy, direct } = await withProxy(bare, async (_proxy, port) => ({
      viaProxy: await echoMs(port, connections, bytes),
      direct: await echoMs(echo.port, connections, bytes),
    }));
    const nominalRtt = 2 * config.oneWayDelayMs;
    // The handshake, the bytes at the cap (the way back runs alongside, one delay behind), and
    // the round trip of the last byte.
    const idealMs =
      (config.handshakeRoundTrips + 1) * nominalRtt +
      (config.bytesPerSecond === null ? 0 : (bytes * 1000) / config.bytesPerSecond);
    // Each byte crosses the proxy twice, there and back.
    const forwarded = (ms: number) => (2 * connections * bytes) / 1e6 / (ms / 1000);
    const rows: Row[] = [
      makeRow({
        benchmark,
        metric: 'delay proxy: round trip of a 1-byte echo (warm connection)',
        unit: 'ms',
        ours: rtt,
        baselineName: 'configured',
        baseline: nominalRtt,
        ratio: ratio(rtt, nominalRtt),
        samples: { ours: [rtt] },
      }),
      makeRow({
        benchmark,
        metric: `delay proxy: echo of ${bytes / 2 ** 20} MiB on a new connection`,
        unit: 'ms',
        ours: oneMs,
        baselineName: 'ideal (handshake + bytes at the cap + round trip)',
        baseline: idealMs,
        ratio: ratio(oneMs, idealMs),
        samples: { ours: [oneMs] },
      }),
      makeRow({
        benchmark,
        metric: `delay proxy without delay or cap: bytes forwarded, ${connections} connections echoing at once`,
        unit: 'MB/s',
        ours: forwarded(viaProxy),
        baselineName: 'direct, no proxy',
        baseline: forwarded(direct),
        ratio: ratio(forwarded(viaProxy), forwarded(direct)),
        samples: { ours: [forwarded(viaProxy)], baseline: [forwarded(direct)] },
        note: "the proxy's ceiling on this machine at this moment; the rows must ask far less of it",
      }),
    ];
    return rows;
  } finally {
    await echo.close();
  }
}
