/**
 * The inspector's event stream against a client that stops reading (a suspended `curl`, a frozen
 * tab, a process that opened the stream and forgot it). Every message is the whole overview, so a
 * stream that is behind needs only the newest one: the emulator must not queue one per change in
 * its memory for as long as the emulator runs.
 */
import { connect, type Socket } from 'node:net';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

let emulator: RunningEmulator;
let socket: Socket | undefined;

beforeEach(async () => {
  // Only the feed's poll is faked: the test moves it on, sockets and everything else run for real.
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
  emulator = await startEmulator();
});
afterEach(async () => {
  socket?.destroy();
  vi.useRealTimers();
  await emulator.close();
});

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** One request with a long path: the overview lists the newest 100 requests. */
async function longRequest(index: number): Promise<void> {
  const response = await fetch(`${emulator.url}/${String(index).padStart(6, '0')}${'x'.repeat(2000)}`);
  await response.body?.cancel();
}

describe('inspector event stream backpressure', () => {
  it('holds at most the newest overview for a client that stopped reading, and sends it when it reads again', async () => {
    for (let i = 0; i < 100; i++) await longRequest(i);
    // Faults that never fire, listed in every overview: each message is ~1.2 MB, so the kernel's
    // loopback buffers hold only a few of them whatever their size on this machine.
    for (let i = 0; i < 8; i++) {
      emulator.mock.faults.add({ match: { pathIncludes: `never-${i}-${'y'.repeat(128 * 1024)}` }, status: 500 });
    }
    const stream = connect(Number(new URL(emulator.url).port), '127.0.0.1');
    socket = stream;
    let received = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      received += chunk;
    });
    await new Promise((resolve) => stream.once('connect', resolve));
    stream.write('GET /_emulator/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await vi.waitFor(() => expect(received).toContain('event: overview'), { timeout: 2000 });
    stream.pause();

    // 40 changes, each a new overview: ~50 MB in all.
    const changes = 40;
    for (let i = 0; i < changes; i++) {
      await longRequest(100 + i);
      vi.advanceTimersByTime(250);
      await turn();
    }
    const last = `/${String(100 + changes - 1).padStart(6, '0')}`;

    received = '';
    stream.resume();
    await vi.waitFor(() => expect(received).toContain(last), { timeout: 3000, interval: 20 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const messages = received.split('event: overview').length - 1;
    // What the kernel's buffers held when the client paused, plus the newest: far fewer than 60.
    expect(messages).toBeLessThan(changes / 2);
    // The newest overview comes last: a client that reads again is up to date.
    const lastMessage = received.slice(received.lastIndexOf('event: overview'));
    expect(lastMessage).toContain(last);
  });
});
