/**
 * The inspector's live feed: a server-sent event stream that sends the overview when it changes.
 * One feed per emulator polls a cheap version string and writes to every open stream, rather than
 * hooking the handler: the emulator's request path stays as it is, and ten open tabs cost what one
 * does. The number of open streams is capped, so that a local process opening connections in a
 * loop cannot make the feed's work grow without bound.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PushApiEmulator } from '../handler.js';
import { inspectorOverview, overviewVersion } from './overview.js';

const POLL_MS = 250;
/** A comment line now and then, so proxies and the browser see the stream is alive. */
const HEARTBEAT_MS = 15_000;
/** Open event streams per emulator; more are answered 503. */
export const MAX_EVENT_STREAMS = 32;

/**
 * One open stream. Each message is the whole overview, so a stream whose client reads slower than
 * the overview changes (a suspended `curl`, a frozen tab) needs only the newest: while its socket
 * has not drained it is sent nothing, and once it drains it gets the overview of that moment. What
 * the emulator buffers for it stays one message, however long the client stays away.
 */
interface Stream {
  readonly res: ServerResponse;
  /** The overview version last written to it. */
  sent: string | undefined;
  /** Set while the socket holds more than its high-water mark: nothing more is written. */
  waitingForDrain: boolean;
}

class Feed {
  readonly #emulator: PushApiEmulator;
  readonly #streams = new Map<ServerResponse, Stream>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #version: string | undefined;
  #message = '';
  #sinceHeartbeat = 0;

  constructor(emulator: PushApiEmulator) {
    this.#emulator = emulator;
  }

  get size(): number {
    return this.#streams.size;
  }

  add(res: ServerResponse): void {
    this.#refresh();
    const stream: Stream = { res, sent: undefined, waitingForDrain: false };
    this.#streams.set(res, stream);
    this.#send(stream, this.#message);
    if (!this.#timer) {
      this.#timer = setInterval(() => this.#tick(), POLL_MS);
      // An open stream must not keep a test's process alive once everything else is done.
      this.#timer.unref();
    }
  }

  remove(res: ServerResponse): void {
    this.#streams.delete(res);
    if (this.#streams.size === 0 && this.#timer) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      this.#version = undefined;
    }
  }

  /** Rebuilds the message when the version moved; true when it did. */
  #refresh(): boolean {
    const version = overviewVersion(this.#emulator);
    if (version === this.#version) return false;
    this.#version = version;
    this.#message = `event: overview\ndata: ${JSON.stringify(inspectorOverview(this.#emulator))}\n\n`;
    return true;
  }

  #tick(): void {
    let text: string | undefined;
    if (this.#refresh()) {
      this.#sinceHeartbeat = 0;
      text = this.#message;
    } else {
      this.#sinceHeartbeat += POLL_MS;
      if (this.#sinceHeartbeat >= HEARTBEAT_MS) {
        this.#sinceHeartbeat = 0;
        text = ': alive\n\n';
      }
    }
    if (text !== undefined) for (const stream of this.#streams.values()) this.#send(stream, text);
  }

  /** Writes `text` unless the stream is still behind, or already has this overview. */
  #send(stream: Stream, text: string): void {
    if (stream.waitingForDrain) return;
    const isOverview = text === this.#message;
    if (isOverview && stream.sent === this.#version) return;
    if (isOverview) stream.sent = this.#version;
    if (stream.res.write(text)) return;
    stream.waitingForDrain = true;
    stream.res.once('drain', () => {
      stream.waitingForDrain = false;
      if (this.#streams.has(stream.res)) this.#send(stream, this.#message);
    });
  }
}

const feeds = new WeakMap<PushApiEmulator, Feed>();

/** Opens an event stream on `res`; false (nothing written) when the emulator has too many open. */
export function streamEvents(
  emulator: PushApiEmulator,
  req: IncomingMessage,
  res: ServerResponse,
  headers: Record<string, string>,
): boolean {
  const feed = feeds.get(emulator) ?? new Feed(emulator);
  feeds.set(emulator, feed);
  if (feed.size >= MAX_EVENT_STREAMS) return false;
  res.writeHead(200, { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' });
  // The browser reconnects after this many ms when the stream breaks.
  res.write('retry: 1000\n\n');
  feed.add(res);
  const stop = () => feed.remove(res);
  req.once('close', stop);
  res.once('close', stop);
  return true;
}
