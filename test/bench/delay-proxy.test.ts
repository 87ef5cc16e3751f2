/** The delay proxy of the network rows: it delays, caps and closes as configured, on loopback. */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type DelayProxyOptions, type RunningProxy, startDelayProxy } from '../../bench/net/delay-proxy.js';

const LOOPBACK = '127.0.0.1';
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function server(onConnection: (socket: Socket) => void): Promise<number> {
  const sockets = new Set<Socket>();
  const listener: Server = createServer({ allowHalfOpen: true }, (socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    onConnection(socket);
  });
  await new Promise<void>((resolve) => listener.listen(0, LOOPBACK, resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        listener.close(() => resolve());
      }),
  );
  return (listener.address() as { port: number }).port;
}

async function proxy(options: DelayProxyOptions): Promise<RunningProxy> {
  const running = await startDelayProxy(options);
  cleanups.push(() => running.close());
  return running;
}

async function client(port: number): Promise<Socket> {
  const socket = connect({ host: LOOPBACK, port, noDelay: true });
  cleanups.push(() => void socket.destroy());
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return socket;
}

async function echoTime(socket: Socket, payload: Buffer): Promise<number> {
  const started = performance.now();
  let received = 0;
  const done = new Promise<void>((resolve) => {
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received >= payload.length) {
        socket.off('data', onData);
        resolve();
      }
    };
    socket.on('data', onData);
  });
  socket.write(payload);
  await done;
  return performance.now() - started;
}

describe('the delay proxy', () => {
  it('adds its delay each way, and a round trip before a new connection carries data', async () => {
    const target = await server((socket) => socket.pipe(socket));
    const { port } = await proxy({ targetPort: target, oneWayDelayMs: 20, bytesPerSecond: Number.POSITIVE_INFINITY });
    // The handshake's round trip runs from the moment the proxy accepts, so it is timed from the
    // connect: on a loaded machine the first write can leave well after the accept.
    const connecting = performance.now();
    const socket = await client(port);
    await echoTime(socket, Buffer.from('x'));
    const firstSinceConnect = performance.now() - connecting;
    const second = await echoTime(socket, Buffer.from('y'));
    // Timers may fire a millisecond early by design, and late on a loaded machine.
    expect(firstSinceConnect).toBeGreaterThanOrEqual(78);
    expect(second).toBeGreaterThanOrEqual(38);
    expect(second).toBeLessThan(40 + 30);
  });

  it('holds one connection to its bandwidth cap, whatever the reads', async () => {
    const target = await server((socket) => socket.pipe(socket));
    const { port } = await proxy({
      targetPort: target,
      oneWayDelayMs: 2,
      bytesPerSecond: 10e6,
      handshakeRoundTrips: 0,
    });
    const socket = await client(port);
    // 1 MB at 10 MB/s: at least 100 ms each way, the two ways running side by side.
    const ms = await echoTime(socket, Buffer.alloc(1_000_000, 1));
    expect(ms).toBeGreaterThanOrEqual(98);
    expect(ms).toBeLessThan(1_000);
  });

  it("delivers a server's last bytes before its end, and counts connections and bytes", async () => {
    const target = await server((socket) => socket.end('goodbye'));
    const running = await proxy({ targetPort: target, oneWayDelayMs: 5 });
    const socket = await client(running.port);
    const text = await new Promise<string>((resolve) => {
      let received = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
      socket.once('end', () => resolve(received));
    });
    expect(text).toBe('goodbye');
    expect(running.stats()).toMatchObject({ connections: 1, bytesDown: 7 });
  });

  it('stops reading from a sender whose receiver does not read, so its memory stays bounded', async () => {
    const size = 64 * 2 ** 20;
    const target = await server((socket) => socket.end(Buffer.alloc(size, 2)));
    const running = await proxy({ targetPort: target, oneWayDelayMs: 1, bytesPerSecond: Number.POSITIVE_INFINITY });
    const socket = await client(running.port);
    socket.pause();
    // Bytes start to flow (however loaded the machine), then the flow must stop well short of the
    // whole: without backpressure the proxy would read all 64 MiB from loopback within that time.
    const deadline = Date.now() + 10_000;
    while (running.stats().bytesDown === 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(running.stats().bytesDown).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(running.stats().bytesDown).toBeLessThan(size / 2);
  });

  it('closes every connection on reset, so that the next run opens its own', async () => {
    const target = await server(() => {});
    const running = await proxy({ targetPort: target, oneWayDelayMs: 1 });
    const socket = await client(running.port);
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    running.reset();
    await closed;
    expect(running.stats().connections).toBe(0);
  });
});
