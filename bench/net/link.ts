/**
 * One direction of an emulated network path: bytes leave at the link's bandwidth, one after the
 * other, and arrive a fixed propagation delay later, in order. A chunk that reaches the link while
 * it is still sending earlier bytes waits its turn, so a connection never goes faster than the cap
 * however its reads are split. When more bytes are queued than the path holds (bandwidth × round
 * trip, what a TCP window would keep in flight), the sending socket is paused, so the sender feels
 * the cap as backpressure and the proxy's memory stays bounded whatever the body's size.
 */
import type { Socket } from 'node:net';

export interface LinkOptions {
  /** Delay added to every byte, in milliseconds. */
  delayMs: number;
  /** Bytes per second this direction carries; Infinity for no cap. */
  bytesPerSecond: number;
  /** Queued bytes above which the source socket is paused. */
  queueLimitBytes: number;
  /** The link carries nothing before this time (`performance.now()`): a TCP handshake's round trip. */
  openAt?: number;
  /** A fault that strikes once this direction has carried `afterBytes`. @default none */
  fault?: LinkFault;
  /** Called when a `reset` fault strikes, at the time its last byte arrives: the proxy resets both sockets. */
  onReset?: () => void;
}

/**
 * What goes wrong on a path: a `reset` (the bytes up to `afterBytes` arrive, then both ends get
 * an RST, as a middlebox dropping the flow does), or a `stall` (the bytes after `afterBytes`
 * arrive `forMs` late, and the connection stays open meanwhile, as a lost route does).
 */
export type LinkFault = { kind: 'reset'; afterBytes: number } | { kind: 'stall'; afterBytes: number; forMs: number };

/** What is due this close to now is delivered now: the granularity of Node's timers. */
const DUE_SLACK_MS = 1;

type Item = { dueAt: number; chunk: Buffer } | { dueAt: number; end: true } | { dueAt: number; reset: true };

export class Link {
  readonly #from: Socket;
  readonly #to: Socket;
  readonly #options: LinkOptions;
  readonly #queue: Item[] = [];
  #queuedBytes = 0;
  /** When the link has finished putting the bytes queued so far on the wire. */
  #busyUntil: number;
  #timer: NodeJS.Timeout | undefined;
  #waitingForDrain = false;
  #bytes = 0;
  /** The fault struck (a stall: its bytes are delayed; a reset: nothing more is carried). */
  #struck = false;
  #resetting = false;

  constructor(from: Socket, to: Socket, options: LinkOptions) {
    this.#from = from;
    this.#to = to;
    this.#options = options;
    this.#busyUntil = options.openAt ?? 0;
    from.on('data', (chunk: Buffer) => this.#push(chunk));
    from.on('end', () => {
      if (!this.#resetting) this.#enqueue({ dueAt: this.#arrival(0), end: true });
    });
    to.on('drain', () => {
      this.#waitingForDrain = false;
      this.#flush();
    });
  }

  /** Bytes carried so far. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Whether the link's fault has struck: a test asserts its faults really happened. */
  get faulted(): boolean {
    return this.#struck;
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#queue.length = 0;
  }

  /** When `size` bytes handed over now reach the other end. */
  #arrival(size: number): number {
    const start = Math.max(performance.now(), this.#busyUntil);
    this.#busyUntil = start + (size * 1000) / this.#options.bytesPerSecond;
    return this.#busyUntil + this.#options.delayMs;
  }

  #push(chunk: Buffer): void {
    if (this.#resetting) return;
    const fault = this.#options.fault;
    if (fault === undefined || this.#struck || this.#bytes + chunk.length < fault.afterBytes) {
      this.#carry(chunk);
      return;
    }
    this.#struck = true;
    const head = chunk.subarray(0, fault.afterBytes - this.#bytes);
    const tail = chunk.subarray(head.length);
    if (head.length > 0) this.#carry(head);
    if (fault.kind === 'reset') {
      this.#resetting = true;
      this.#enqueue({ dueAt: this.#arrival(0), reset: true });
      return;
    }
    // Nothing behind the stall moves until it ends: the link is busy with nothing for `forMs`.
    this.#busyUntil = Math.max(performance.now(), this.#busyUntil) + fault.forMs;
    if (tail.length > 0) this.#carry(tail);
  }

  #carry(chunk: Buffer): void {
    this.#bytes += chunk.length;
    this.#queuedBytes += chunk.length;
    this.#enqueue({ dueAt: this.#arrival(chunk.length), chunk });
    if (this.#queuedBytes > this.#options.queueLimitBytes) this.#from.pause();
  }

  #enqueue(item: Item): void {
    this.#queue.push(item);
    if (this.#queue.length === 1) this.#schedule();
  }

  #schedule(): void {
    clearTimeout(this.#timer);
    const head = this.#queue[0];
    if (!head || this.#waitingForDrain) return;
    // Node's timers fire up to a millisecond after their time: aim a millisecond early, and let
    // #flush deliver what is due within that millisecond, so that bytes arrive on time on average.
    const wait = Math.max(0, Math.floor(head.dueAt - performance.now() - DUE_SLACK_MS));
    this.#timer = setTimeout(() => this.#flush(), wait);
  }

  /** Delivers every item that is due, in order, until the receiving socket asks to wait. */
  #flush(): void {
    const now = performance.now();
    while (!this.#waitingForDrain && this.#queue.length > 0 && (this.#queue[0] as Item).dueAt <= now + DUE_SLACK_MS) {
      const item = this.#queue.shift() as Item;
      if ('end' in item) {
        this.#to.end();
        continue;
      }
      if ('reset' in item) {
        this.stop();
        this.#options.onReset?.();
        return;
      }
      this.#queuedBytes -= item.chunk.length;
      if (!this.#to.destroyed && !this.#to.write(item.chunk)) this.#waitingForDrain = true;
    }
    if (this.#queuedBytes <= this.#options.queueLimitBytes && this.#from.isPaused()) this.#from.resume();
    this.#schedule();
  }
}
