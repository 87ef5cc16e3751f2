/**
 * How a run goes, for publish and upload alike. In this order:
 * - N loops over one source with one stop reason (`RunEngine`), and the errors that stop a run
 *   (`stopsTheRun`);
 * - how long a run goes on while the service pushes back and accepts nothing (`PushBackPatience`);
 * - how many items may be in flight, found from round trips and from the service's pushback
 *   (`ConcurrencyLimiter`);
 * - the window's arithmetic, apart from any waiting (`decide`: TCP Vegas);
 * - where a client's last run left its window (`WindowMemory`).
 */
import {
  type AbortError,
  AuthenticationError,
  ConfigurationError,
  ConnectionError,
  NotFoundError,
  PermissionDeniedError,
  type PushError,
  TokenError,
} from '../errors.js';
import type { ConcurrencyHookEvent } from '../http/public-types.js';
import type { PushBack } from '../http/types.js';
import { abortErrorFrom, WakeList } from '../internal/waits.js';

// ── The run ──────────────────────────────────────────────────────────────────────────────────────
// N loops over one shared source, one stop reason, and which errors stop the run.

/** What the engine pulls its work from: one iterator shared by every loop. */
export type WorkSource<T> = Iterator<T, void, undefined> | AsyncIterator<T, void, undefined>;

/** The window the engine's loops share: a slot is taken before an item is pulled, and given back once it settled. */
interface WorkWindow {
  /** The most slots the window may ever have: how many loops run. */
  readonly max: number;
  /** Resolves with a slot; rejects with an AbortError when the signal fires. */
  acquire(signal?: AbortSignal): Promise<void>;
  release(): void;
  /** Wakes every loop waiting for a slot, so that it sees the run has stopped or run out. */
  wakeAll(): void;
}

/**
 * One run of `publish` or `upload`: loops pull from one shared source, with no queue (the shape
 * of aws lib-storage's `Upload`). A loop takes a slot of the window before it pulls an item and
 * gives it back once the item settled, so at most the window's current limit of items is in
 * hand, while that limit moves (`ConcurrencyLimiter`, below). The first stop ends every loop at its
 * next pull, and items in flight finish.
 */
export class RunEngine {
  /**
   * Why the run stopped before its source ran out, other than the caller's abort:
   * - `#stoppedBy`: an error every further item would meet (a refused connection or token, a 401,
   *   403 or 404, a failed address request, a failing rate budget), when it came first;
   * - `#thrown`: the first thing the caller's own code threw (the input, or an `onBatchSettled` /
   *   `onFileSettled`), even after the service stopped the run: the cause follows one order
   *   whatever the timing (`stopCause`), so a callback that throws while the run winds down
   *   must not vanish behind the service's error.
   */
  #stoppedBy: PushError | undefined;
  #thrown: { error: unknown } | undefined;
  /** The caller asked the run to end in order (`stopSignal`): no cause, since the caller knows. */
  #halted = false;
  #exhausted = false;
  readonly #signal: AbortSignal | undefined;
  readonly #onStoppedBy: ((error: PushError) => void) | undefined;
  readonly #onStop: (() => void) | undefined;

  /**
   * `onStoppedBy` is told the first `stopped-by` error once (the reports' `stoppedBy`); `onStop`
   * is told once of the first stop of either kind, so that work waiting on the run's behalf (an
   * address request asked for ahead) can be given up.
   */
  constructor(signal: AbortSignal | undefined, onStoppedBy?: (error: PushError) => void, onStop?: () => void) {
    this.#signal = signal;
    this.#onStoppedBy = onStoppedBy;
    this.#onStop = onStop;
  }

  /** True once no more items must be started: aborted, stopped, or halted. */
  readonly shouldStop = (): boolean =>
    this.#stoppedBy !== undefined || this.#thrown !== undefined || this.#halted || this.#signal?.aborted === true;

  /** Runs up to `window.max` loops over `source` until it runs out or the run stops. */
  async run<T>(source: WorkSource<T>, window: WorkWindow, work: (item: T) => Promise<void>): Promise<void> {
    const loop = async (): Promise<void> => {
      while (!this.shouldStop() && !this.#exhausted) {
        try {
          await window.acquire(this.#signal);
        } catch {
          return; // aborted while waiting: the abort is the outcome
        }
        try {
          if (this.shouldStop() || this.#exhausted) return;
          let next: IteratorResult<T, void>;
          try {
            next = await source.next();
          } catch (error) {
            // The input threw, unless the read was cut short by the abort: then the abort is the outcome.
            if (!this.#signal?.aborted) this.interrupt(error);
            return;
          }
          if (next.done) {
            this.#exhausted = true;
            return;
          }
          await work(next.value);
        } finally {
          window.release();
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: window.max }, loop));
    } finally {
      window.wakeAll();
    }
  }

  /** Stops the run with an error every further item would meet; the first one is kept. */
  stopBy(error: PushError): void {
    // The report's `stoppedBy` names the service's error only when it was what stopped the run.
    if (this.#stoppedBy !== undefined || this.#thrown !== undefined) return;
    this.#stoppedBy = error;
    this.#onStoppedBy?.(error);
    this.#onStop?.();
  }

  /**
   * Ends the run in order at the caller's request: no more items start, items in flight finish,
   * and work waiting on the run's behalf is given up (`onStop`).
   */
  halt(): void {
    if (this.#halted) return;
    const first = !this.shouldStop();
    this.#halted = true;
    if (first) this.#onStop?.();
  }

  /** Stops the run because the caller's code threw; the first one is kept, even after a `stopBy`. */
  interrupt(error: unknown): void {
    if (this.#thrown !== undefined) return;
    const first = this.#stoppedBy === undefined;
    this.#thrown = { error };
    if (first) this.#onStop?.();
  }

  /** The error that stopped the run early by the service (the report's `stoppedBy`), if any. */
  get stoppedBy(): PushError | undefined {
    return this.#stoppedBy;
  }

  /**
   * The error a stopped run rejects with, as its `cause`, or undefined when the run was not
   * stopped. One order for both operations: what the caller's code threw first (a bug or a
   * decision of theirs, which must not hide behind its consequences), then the caller's abort,
   * then the error the service stopped the run with.
   */
  stopCause(abortError: (signal: AbortSignal) => AbortError): unknown {
    if (this.#thrown !== undefined) return this.#thrown.error;
    if (this.#signal?.aborted) return abortError(this.#signal);
    return this.#stoppedBy;
  }
}

/**
 * Errors that every following request would meet too, so the run stops instead of hammering: a
 * connection that could not be made at all (DNS, TLS, nothing listening, after the transport's own
 * retries), a refused token, a 401, 403 or 404 on the app, a configuration error. A connection lost
 * after the request was written is not one of them: it concerns that request only.
 */
export function stopsTheRun(error: PushError): boolean {
  return (
    (error instanceof ConnectionError && !error.requestMaybeSent) ||
    error instanceof AuthenticationError ||
    error instanceof PermissionDeniedError ||
    error instanceof NotFoundError ||
    error instanceof TokenError ||
    error instanceof ConfigurationError
  );
}

// ── The patience ────────────────────────────────────────────────────────────────────────────────
// A run's stop of its own: an outage met for a deadline, not by every item in turn.

/** Refuses a `rateLimitDeadlineMs` option that is not a number of milliseconds ≥ 0 (Infinity: no deadline). */
export function checkPatienceOption(deadlineMs: unknown): void {
  if (deadlineMs !== undefined && !(typeof deadlineMs === 'number' && deadlineMs >= 0 && !Number.isNaN(deadlineMs))) {
    throw new ConfigurationError('rateLimitDeadlineMs must be a number ≥ 0 (milliseconds)');
  }
}

/**
 * A run's patience with a service that pushes back (a 429, or a 503: unavailable) and accepts
 * nothing. Each request's retries are bounded on their own, but a run goes on to its next batch or
 * file: without a bound of the run's own, a service down for hours would meet every item of the
 * input in turn, each with its retries and their `Retry-After` waits. The patience begins at the
 * first push-back since the service last accepted an item, lasts `deadlineMs` for every item of
 * the run at once, and begins again with the next accepted one, or after the run sent nothing for
 * longer than the deadline. Measured on the monotonic clock: a wall clock stepped by NTP mid-run
 * must not end or stretch it.
 */
export class PushBackPatience {
  readonly #deadlineMs: number;
  /** When the service first pushed back since it last accepted an item; undefined while it accepts. */
  #since: number | undefined;
  /** Items of the run being sent (a request on the wire, or waiting to be sent again). */
  #inFlight = 0;
  /** Since when no item of the run was being sent (it waited for its input, say). */
  #quietSince: number | undefined;

  constructor(deadlineMs: number) {
    this.#deadlineMs = deadlineMs;
  }

  /** The service pushed back: the patience begins now, unless it already had. */
  pushedBack(): void {
    this.#since ??= performance.now();
  }

  /**
   * An item starts being sent. After the run sent nothing for longer than the deadline (its input
   * was slow to come), the patience is forgotten: nothing says the service refused all that time.
   */
  itemStarted(): void {
    if (this.#inFlight++ === 0 && this.#quietSince !== undefined) {
      if (performance.now() - this.#quietSince > this.#deadlineMs) this.#since = undefined;
      this.#quietSince = undefined;
    }
  }

  /** An item settled (or was given up): with none left being sent, the run is quiet from now. */
  itemSettled(): void {
    if (--this.#inFlight === 0) this.#quietSince = performance.now();
  }

  /** The service accepted an item: the run moves, and its next push-back starts a new patience. */
  accepted(): void {
    this.#since = undefined;
  }

  /** Whether a wait of `delayMs`, starting now, would end within the patience (begun now if it had not). */
  allowsWait(delayMs: number): boolean {
    this.pushedBack();
    return performance.now() + delayMs < (this.#since as number) + this.#deadlineMs;
  }

  /**
   * Nothing was accepted for the whole deadline while the service pushed back: every further item
   * would meet the same answer, so the run stops at the next item that fails with one.
   */
  get runOut(): boolean {
    return this.#since !== undefined && performance.now() >= this.#since + this.#deadlineMs;
  }
}

// ── The in-flight window ─────────────────────────────────────────────────────────────────────────
// How many items a run has in hand, moved by round trips and by the service's push-back.

/** Where the window starts: small enough to be polite to a service never seen, large enough that the first batches leave at once. */
export const INITIAL_WINDOW = 8;

/**
 * The slowest uplink a run's first round is sized for, in bytes per second (2 Mbit/s). The first
 * round goes out blind: on an uplink that all its requests share, each of them takes as long as the
 * whole round takes to cross it, and a round past what the link carries within the attempt timeout
 * gets no answer at all (a publish's batches then end `unknown`, an upload's PUTs are sent again
 * into the same queue).
 */
const SLOWEST_UPLINK_BYTES_PER_SECOND = 250_000;

/**
 * The most request-body bytes a run puts in flight before its first answer (at least one request):
 * what the slowest uplink sized for carries in a quarter of the attempt timeout, so that the first
 * round is answered well within it. At the default 30 s, about 1.9 MB: the usual first round of a
 * publish (8 batches of small records) is left as it was.
 */
export function startBytesFor(timeoutMs: number): number {
  return Math.max(1, Math.floor((SLOWEST_UPLINK_BYTES_PER_SECOND * timeoutMs) / 4 / 1000));
}

/**
 * The request rate slow start may reach in one step, in requests per millisecond (512 a second).
 * Slow start is there to be gentle to a service never seen, and a service feels a rate, not a
 * window: 8 requests in flight over loopback are thousands a second, 64 over a path of 150 ms are
 * about 430. So where a round trip is long, slow start goes at once to the window that keeps the
 * rate at this (doubling, where that is more), instead of doubling once per long round trip.
 */
const SLOW_START_RATE_PER_MS = 0.512;

/**
 * A round whose answers from the lower to the upper quartile took at most this many times one
 * another, none of its requests still out for longer, came back together, as a long path's do. The
 * rate step above is taken only on such a round: answers that come back one after another say the
 * service served them in turn, so the long round trip is its own time, not the path's, and a wider
 * burst would only queue there or, at a rate limit, be refused whole.
 */
const ANSWERED_TOGETHER = 1.25;

/** Minimums of answers over new connections are kept apart, under their size class plus this. */
const NEW_CONNECTION_CLASSES = 16;

/** Rounds of decisions a no-load minimum is kept for before it is learnt again (a path may get slower for good). */
const EPOCH_ROUNDS = 100;

interface ConcurrencyLimiterOptions {
  /** The most items in hand at once: the `concurrency` option. */
  max: number;
  /** `false`: the window stays at `max`. @default true */
  adaptive?: boolean;
  /** The window at the start. @default min(max, INITIAL_WINDOW) */
  initial?: number;
  /**
   * What the client's previous run of this operation learnt (`WindowMemory`, below): this run starts at
   * its window when that is higher than `initial`, and keeps its knee.
   */
  resume?: LearntWindow | undefined;
  operation: ConcurrencyHookEvent['operation'];
  /** Told of the start and of every change of the window (the `concurrency` hook). */
  onChange?: (event: ConcurrencyHookEvent) => void;
  /**
   * The attempt timeout the run's requests are under, when it covers the whole request, its body
   * included (a publish's batches, an upload's PUTs): the window grows only while the slowest answer of a round,
   * scaled by the growth, stays within half of it. @default no such bound
   */
  answerWithinMs?: number;
  /**
   * The most request-body bytes in flight before the run's first answer (`fitToSize`): see
   * `startBytesFor`. @default no such bound
   */
  startBytes?: number;
  /** Clock in ms, injectable for tests. @default performance.now */
  now?: () => number;
}

/**
 * What a run's window learnt, for the client's next run of the same operation: the window it ended
 * at, and the knee a latency shrink or push-back found (undefined: none was found).
 */
interface LearntWindow {
  limit: number;
  knee: number | undefined;
}

/** What a run's own evidence says of its window, for the client to remember (`WindowMemory`, below). */
interface WindowOutcome extends LearntWindow {
  /** The run met a latency shrink or push-back: its window is the service's word, even if lower. */
  pushedBack: boolean;
}

/** A request on the wire, from `depart` to `landed`. */
export interface Departure {
  /** When it left, on the limiter's clock. */
  readonly at: number;
  /** It likely opened a connection of its own (see `depart`). */
  readonly newConnection: boolean;
  landed: boolean;
}

/** One answered request, for the window: when its last attempt left, when it was answered, how large it was. */
interface RoundTripSample {
  startedAt: number;
  endedAt: number;
  /** The request body's size, so that large uploads are compared with large uploads. */
  bytes?: number;
  /** Its last attempt likely opened a connection (`depart`): its round trip carries the handshake. */
  newConnection?: boolean;
}

/** The no-load round-trip time of one size class, over the current and the previous epoch. */
interface MinimumRtt {
  current: number;
  previous: number;
}

/**
 * The in-flight window of one `publish` or `upload` run, found from the network in both
 * directions (`decide`, below, says how and why). The run engine's loops each take a slot before
 * they pull an item and give it back once the item settled, so at most `limit` items are in hand
 * at once while the limit moves. The service's explicit push-back (a 429 or 503) halves the
 * window, once per event.
 */
export class ConcurrencyLimiter {
  readonly max: number;
  readonly adaptive: boolean;
  readonly #operation: ConcurrencyHookEvent['operation'];
  readonly #onChange: ((event: ConcurrencyHookEvent) => void) | undefined;
  readonly #now: () => number;
  readonly #answerWithinMs: number;
  readonly #startBytes: number;
  #limit: number;
  #inFlight = 0;
  /** Items whose requests were let go (`admit`) and have not settled (`dismiss`). */
  #sending = 0;
  /** An answer came: the window is the network's finding from now on, not the first items' size. */
  #answered = false;
  readonly #waiters = new WakeList();
  /** Samples of requests sent after the last change, the only ones that say anything about the current window. */
  #roundSince: number;
  #round: RoundSample[] = [];
  /** The most items in hand since the round began: whether the run filled its window. */
  #roundPeak = 0;
  #rounds = 0;
  #minimums = new Map<number, MinimumRtt>();
  /** The window the last latency shrink settled on: growth past it is one request per round, for the whole run. */
  #knee: number | undefined;
  /** Push-back until this time belongs to the event that already halved the window. */
  #backedOffUntil = Number.NEGATIVE_INFINITY;
  /** When the window last halved: push-back on a request sent before then belongs to that event. */
  #halvedAt = Number.NEGATIVE_INFINITY;
  /**
   * The least window at which requests got no answer in time, until the next epoch: growth stays
   * below it. A timeout costs a whole `timeoutMs` and, for a batch, an outcome nobody knows, so a
   * window that met one is not probed again, where a 429 or a queue is only probed one step at a time.
   */
  #ceiling: number | undefined;
  #lastRtt: number | undefined;
  /**
   * The window `fitToSize` narrowed for the blind first round: once that round is answered without
   * a queue, the window goes back to it (within this round's growth bound), since the fit was about
   * going out blind, not about the service.
   */
  #beforeFit: number | undefined;
  /** The window grew at least once: slow start's later steps wait for a whole window of answers. */
  #steppedUp = false;
  #started = false;
  #resumed = false;
  /** Requests of the run on the wire (`depart` to `landed`), and the most there have been at once. */
  #onWire = 0;
  /** The requests on the wire, oldest first (landed ones are dropped from the front). */
  #wire: Departure[] = [];
  #wirePeak = 0;
  /** A round of this run filled its window and was judged, or the service pushed back: the window is this run's finding. */
  #judged = false;
  #pushedBack = false;

  constructor(options: ConcurrencyLimiterOptions) {
    this.max = Math.max(1, Math.floor(options.max));
    this.adaptive = options.adaptive ?? true;
    this.#operation = options.operation;
    this.#onChange = options.onChange;
    this.#now = options.now ?? (() => performance.now());
    this.#answerWithinMs = options.answerWithinMs ?? Number.POSITIVE_INFINITY;
    this.#startBytes = options.startBytes ?? Number.POSITIVE_INFINITY;
    let initial = this.adaptive ? (options.initial ?? INITIAL_WINDOW) : this.max;
    const resume = this.adaptive ? options.resume : undefined;
    // The previous run's window only ever starts this one higher than a run never seen would (never
    // lower: a window below the start is found again in a round trip). Its knee, wherever the
    // service put it, keeps growth past it one request per round, as it was when that run ended.
    if (resume !== undefined) {
      const raised = resume.limit > initial;
      if (raised) initial = resume.limit;
      if (resume.knee !== undefined) this.#knee = resume.knee;
      this.#resumed = raised || resume.knee !== undefined;
    }
    this.#limit = Math.max(1, Math.min(this.max, Math.floor(initial)));
    this.#roundSince = this.#now();
  }

  /** How many items may be in hand now. */
  get limit(): number {
    return this.#limit;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /**
   * What this run found of its window, for the client's next run; undefined when the run judged
   * no round (too short, or never filled its window) and met no push-back: nothing to go on.
   */
  outcome(): WindowOutcome | undefined {
    if (!this.adaptive || !this.#judged) return undefined;
    return { limit: this.#limit, knee: this.#knee, pushedBack: this.#pushedBack };
  }

  /** Announces the starting window (the hook's `start` event); later calls do nothing. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#roundSince = this.#now();
    this.#emit(this.#limit, 'start');
  }

  /** Waits until fewer than `limit` items are in hand, then takes a slot. Rejects with an AbortError on abort. */
  async acquire(signal?: AbortSignal): Promise<void> {
    this.start();
    for (;;) {
      if (signal?.aborted) throw abortErrorFrom(signal);
      if (this.#inFlight < this.#limit) {
        this.#inFlight++;
        this.#roundPeak = Math.max(this.#roundPeak, this.#inFlight);
        return;
      }
      await this.#waiters.wait(signal);
    }
  }

  /** Whether `fitToSize` would still use an item's size: the run has had no answer yet. */
  get fitsToSize(): boolean {
    return this.adaptive && !this.#answered && Number.isFinite(this.#startBytes);
  }

  /**
   * Fits the window to the size in bytes of an item about to be sent, until the run's first answer:
   * no more than `startBytes` of bodies go out blind (at least one item). Called before `admit`.
   */
  fitToSize(bytes: number): void {
    if (!this.fitsToSize || !(bytes > 0)) return;
    const fit = Math.max(1, Math.floor(this.#startBytes / bytes));
    if (fit >= this.#limit) return;
    this.#beforeFit = Math.max(this.#beforeFit ?? 0, this.#limit);
    this.#set(fit, 'size');
  }

  /**
   * Waits until fewer than `limit` items are being sent, then counts this one: a loop takes its slot
   * before it knows its item's size, so a window narrowed by `fitToSize` (or a shrink) holds the items
   * already in hand here. Each `admit` is matched by one `dismiss`. Rejects with an AbortError on abort.
   */
  async admit(signal?: AbortSignal): Promise<void> {
    for (;;) {
      if (signal?.aborted) throw abortErrorFrom(signal);
      if (this.#sending < this.#limit) {
        this.#sending++;
        return;
      }
      await this.#waiters.wait(signal);
    }
  }

  /**
   * An item's request leaves for the first time; `landed` is called with what this returns once it
   * settled. `newConnection` when it likely opens a connection of its own: more of the run's
   * requests are on the wire than ever before, and a pool of kept-alive connections holds about one
   * per request a run has had on the wire at once. Its round trip then carries the connection's
   * handshake (a round trip more, two with TLS), which says nothing of a queue at the service.
   */
  depart(): Departure {
    this.#onWire++;
    const newConnection = this.#onWire > this.#wirePeak;
    if (newConnection) this.#wirePeak = this.#onWire;
    const departure = { at: this.#now(), newConnection, landed: false };
    this.#wire.push(departure);
    return departure;
  }

  /** A request that departed settled, whatever its outcome. */
  landed(departure: Departure): void {
    if (departure.landed) return;
    departure.landed = true;
    this.#onWire = Math.max(0, this.#onWire - 1);
    // Departures are in the order they left: the first one not landed is the oldest on the wire.
    let landedAhead = 0;
    while (landedAhead < this.#wire.length && this.#wire[landedAhead]?.landed) landedAhead++;
    if (landedAhead > 0) this.#wire.splice(0, landedAhead);
    // Behind a request that stays out (a long wait for a 429, a stall), the ones landed after it
    // would pile up for as long as it does: dropped once they outnumber those still out.
    if (this.#wire.length > 2 * this.#onWire + 64) this.#wire = this.#wire.filter((each) => !each.landed);
  }

  /** How long the oldest request still on the wire has been out, in ms; 0 when none is. */
  #oldestOnWireMs(): number {
    const oldest = this.#wire[0];
    return oldest === undefined ? 0 : Math.max(0, this.#now() - oldest.at);
  }

  /** An admitted item settled. */
  dismiss(): void {
    this.#sending = Math.max(0, this.#sending - 1);
    this.#waiters.wakeAll();
  }

  /** Gives a slot back. */
  release(): void {
    this.#inFlight = Math.max(0, this.#inFlight - 1);
    this.#waiters.wakeAll();
  }

  /** Wakes the loops waiting for a slot, so that they see that the run stopped or ran out. */
  wakeAll(): void {
    this.#waiters.wakeAll();
  }

  /** An answered request: its round-trip time feeds the window (Vegas, once per round of fresh samples). */
  onRoundTrip(sample: RoundTripSample): void {
    const rtt = sample.endedAt - sample.startedAt;
    if (!this.adaptive || !(rtt >= 0) || !Number.isFinite(rtt)) return;
    this.#answered = true;
    this.#lastRtt = rtt;
    const sizeClass = sizeClassOf(sample.bytes);
    const newConnection = sample.newConnection === true;
    this.#minimumFor(sizeClass, rtt);
    if (newConnection) this.#minimumFor(sizeClass + NEW_CONNECTION_CLASSES, rtt);
    // Sent before the last change: it measured the old window.
    if (sample.startedAt < this.#roundSince) return;
    this.#round.push({ ratio: 1, rttMs: rtt, minRttMs: rtt, sizeClass, newConnection });
    // About one decision per round trip, as Vegas makes: half a window of fresh answers.
    if (this.#round.length < Math.ceil(this.#limit / 2)) return;
    // Each answer against the least round trip seen by now, not by the time it came (an answer that
    // set a new minimum would otherwise read as no queue at all). An answer over a connection opened
    // for it carries the handshake, so it is held against the least of such answers: a round that
    // just stepped the window up is mostly new connections, and their handshakes are no queue. The
    // few answers of that round over kept connections are not enough on their own: they may have
    // reached the service first, ahead of the queue the new ones met.
    for (const each of this.#round) {
      const minimum = this.#minimumFor(each.sizeClass + (each.newConnection ? NEW_CONNECTION_CLASSES : 0), each.rttMs);
      each.minRttMs = minimum;
      each.ratio = Math.max(each.rttMs, 0.1) / Math.max(minimum, 0.1);
    }
    // The lower quartile: an answer held up by a pause of this machine is not the service
    // queueing; a queue there holds up most answers of the round.
    const quartile = lowerQuartile(this.#round);
    const slowest = Math.max(...this.#round.map((each) => each.rttMs));
    const filled = this.#roundPeak * 2 >= this.#limit;
    const bound = this.#growthBound(slowest);
    // The rate step is for a long path: only a round answered together takes it. Its answers are
    // judged from the lower to the upper quartile, so that one answer held up or hurried by a pause
    // of this machine does not decide; a request still on the wire is at least as slow as it has
    // been out, so half a round answered at once and the other half late or never is not together.
    const [early, late] = quartilesOf(this.#round.map((each) => each.rttMs));
    const latest = Math.max(late, this.#oldestOnWireMs());
    const together = latest <= ANSWERED_TOGETHER * Math.max(early, 0.1);
    const decision = decide(this.#limit, bound, quartile.ratio, this.#knee, together ? quartile.rttMs : 0);
    // In slow start, a step past doubling, and any step after a step up, wait for a whole window of
    // answers (a shrink does not wait). The first half of a round are the answers that met the
    // shortest queue, and whether a round came back together is a question about all of it: half a
    // round answered at once and half late or never is no long path.
    const slowStartStep = decision.kind === 'grow' && this.#knee === undefined;
    const pastDoubling = slowStartStep && decision.limit > 2 * this.#limit;
    if (slowStartStep && (pastDoubling || this.#steppedUp) && this.#round.length < this.#limit) return;
    this.#newRound();
    const beforeFit = this.#beforeFit;
    this.#beforeFit = undefined;
    if (filled) this.#judged = true;
    // A window the run does not fill (the input is slower than the network) says nothing about the service.
    if (decision.kind === 'grow' && filled) {
      this.#steppedUp = true;
      const limit = Math.max(decision.limit, Math.min(beforeFit ?? 0, bound));
      this.#set(limit, 'grow', quartile.rttMs, quartile.minRttMs);
    } else if (decision.kind === 'shrink') {
      this.#judged = true;
      this.#pushedBack = true;
      this.#knee = decision.limit;
      this.#set(decision.limit, 'latency', quartile.rttMs, quartile.minRttMs);
    }
  }

  /**
   * The service pushed back (a 429 or a 503), or a request got no answer within its timeout: the
   * window halves, once per event. Push-back answering a request sent before the last halving (it
   * was sent into the wider window), or coming before the service's wait ends or within a round
   * trip, belongs to the same event. `sentAt`: when that request left, on this limiter's clock.
   */
  onBackPressure(reason: PushBack['reason'], waitMs = 0, sentAt?: number): void {
    if (!this.adaptive) return;
    this.#answered = true;
    const now = this.#now();
    if (now < this.#backedOffUntil) return;
    if (sentAt !== undefined && sentAt < this.#halvedAt) return;
    this.#halvedAt = now;
    this.#backedOffUntil = now + Math.max(Number.isFinite(waitMs) ? waitMs : 0, this.#lastRtt ?? 0);
    this.#judged = true;
    this.#pushedBack = true;
    this.#beforeFit = undefined;
    if (reason === 'timed-out') this.#ceiling = Math.min(this.#ceiling ?? this.#limit, this.#limit);
    const halved = Math.max(1, Math.floor(this.#limit / 2));
    // The halved window is a knee, as TCP's slow-start threshold is: growth past it is one request
    // per round, so that a service refusing at a limit is not met with a doubled window next round.
    this.#knee = Math.min(this.#knee ?? halved, halved);
    this.#set(halved, reason);
  }

  /**
   * How far the window may grow this round: `max`, below a window that met a timeout, and no wider
   * than keeps the round's slowest answer within half the attempt timeout should round trips grow
   * with the window, as they do on a link whose bandwidth the requests share: there a doubled
   * window doubles every answer's time, and answers that cross the timeout never come back to say so.
   */
  #growthBound(slowestRttMs: number): number {
    let bound = this.max;
    if (this.#ceiling !== undefined) bound = Math.min(bound, this.#ceiling - 1);
    if (slowestRttMs > 0) bound = Math.min(bound, Math.floor((this.#limit * this.#answerWithinMs) / 2 / slowestRttMs));
    return Math.max(1, bound);
  }

  #minimumFor(sizeClass: number, rtt: number): number {
    let minimum = this.#minimums.get(sizeClass);
    if (minimum === undefined) {
      minimum = { current: rtt, previous: rtt };
      this.#minimums.set(sizeClass, minimum);
    }
    minimum.current = Math.min(minimum.current, rtt);
    return Math.min(minimum.current, minimum.previous);
  }

  #newRound(): void {
    this.#round = [];
    this.#roundPeak = this.#inFlight;
    this.#roundSince = this.#now();
    this.#rounds++;
    if (this.#rounds % EPOCH_ROUNDS === 0) {
      this.#ceiling = undefined;
      for (const minimum of this.#minimums.values()) {
        minimum.previous = minimum.current;
        minimum.current = Number.POSITIVE_INFINITY;
      }
    }
  }

  #set(limit: number, reason: ConcurrencyHookEvent['reason'], rttMs?: number, minRttMs?: number): void {
    const previous = this.#limit;
    if (limit === previous) return;
    this.#limit = limit;
    this.#newRound();
    this.#emit(previous, reason, rttMs, minRttMs);
    if (limit > previous) this.#waiters.wakeAll();
  }

  #emit(previous: number, reason: ConcurrencyHookEvent['reason'], rttMs?: number, minRttMs?: number): void {
    this.#onChange?.({
      operation: this.#operation,
      limit: this.#limit,
      previous,
      inFlight: this.#inFlight,
      reason,
      ...(reason === 'start' && this.#resumed && { resumed: true }),
      ...(rttMs !== undefined && { rttMs: Math.round(rttMs * 10) / 10 }),
      ...(minRttMs !== undefined && { minRttMs: Math.round(minRttMs * 10) / 10 }),
    });
  }
}

/** One answer of a round: its round trip, the least one seen for its size when the round is judged, and their ratio. */
interface RoundSample {
  ratio: number;
  rttMs: number;
  minRttMs: number;
  sizeClass: number;
  newConnection: boolean;
}

/** The answer at the round's lower quartile of inflation (the round is never empty here). */
/** The lower and upper quartiles of some round trips (at least one). */
function quartilesOf(rtts: readonly number[]): [number, number] {
  const sorted = [...rtts].sort((a, b) => a - b);
  const last = sorted.length - 1;
  return [sorted[Math.floor(last / 4)] as number, sorted[Math.ceil((3 * last) / 4)] as number];
}

function lowerQuartile(samples: readonly RoundSample[]): RoundSample {
  const sorted = [...samples].sort((a, b) => a.ratio - b.ratio);
  return sorted[Math.floor((sorted.length - 1) / 4)] as RoundSample;
}

// ── The window's arithmetic ──────────────────────────────────────────────────────────────────────
// Apart from any waiting: TCP Vegas, applied to requests.
//
// Vegas compares the round-trip time a window of requests takes with the least one seen (the
// no-load time). When a window of `limit` requests takes `rtt` instead of `minRtt`, about
// `limit × (1 - minRtt / rtt)` of them are waiting in a queue on the far side. Vegas keeps that
// queue between `alpha` and `beta` requests: enough to keep the service busy, little enough that
// the client is not what makes it slow. Below `alpha` the window grows, above `beta` it goes back
// to what the service handled without queueing plus `alpha`, which is the knee of its latency curve.
//
// Why Vegas rather than Gradient2 (Netflix concurrency-limits) or AIMD alone: a publish or an
// upload is a bounded burst of near-uniform requests from one client, not a long-lived server
// seeing bursty mixed traffic. The minimum is a sharp, cheap reference there, and one decision per
// round trip, made on fresh samples only, settles within a band of a few requests instead of
// drifting with a long-term average. AIMD alone (halving on a 429 or 503) stays as the answer to
// an explicit "slow down": it is the service's word, where latency is only a hint.
//
// Thresholds grow with the logarithm of the window, as Netflix's Vegas does, so that a wide window
// tolerates the jitter of a real network while a narrow one still reacts to a queue of a few requests.

/** What one round of samples says about the window. */
type WindowDecision =
  | { kind: 'hold' }
  | { kind: 'grow'; limit: number }
  | { kind: 'shrink'; limit: number; queue: number };

/** Requests allowed to queue at the service before the window stops growing. */
function alphaFor(limit: number): number {
  return Math.max(2, Math.ceil(2 * Math.log10(Math.max(1, limit))));
}

/** Requests queued at the service past which the window shrinks. */
function betaFor(limit: number): number {
  return 2 * alphaFor(limit);
}

/**
 * One decision from a round's ratio of round-trip time to its no-load minimum (≥ 1, the round's lower quartile).
 * Below alpha the window doubles until a first latency shrink or push-back (Vegas's slow start), or
 * goes to the window that keeps the request rate at `SLOW_START_RATE_PER_MS` for the round's
 * round trip `rttMs` (0 for a round whose answers did not come back together), when that is more;
 * then it grows by half up to `knee`, the window that shrink or halving settled on, and by one
 * request per round above it, so that a window that found the knee probes past it gently.
 */
export function decide(limit: number, max: number, ratio: number, knee: number | undefined, rttMs = 0): WindowDecision {
  const queue = limit * (1 - 1 / Math.max(1, ratio));
  const alpha = alphaFor(limit);
  if (queue >= betaFor(limit)) {
    // What the service handled without queueing, plus the queue Vegas allows: the knee.
    const target = Math.ceil(limit / ratio + alpha);
    const next = Math.max(1, Math.min(limit - 1, target));
    return next < limit ? { kind: 'shrink', limit: next, queue } : { kind: 'hold' };
  }
  if (queue >= alpha || limit >= max) return { kind: 'hold' };
  // Before any knee is known (slow start) every round short of alpha doubles: a round whose answers
  // came partly over new connections carries their handshake and reads as a small queue.
  const fast = knee === undefined || (queue <= 1 && limit < knee);
  const step = !fast ? 1 : knee === undefined ? slowStartStep(limit, rttMs) : Math.max(1, Math.floor(limit / 2));
  return { kind: 'grow', limit: Math.min(max, limit + step) };
}

/** Slow start's step: double, or up to the window that keeps the rate at SLOW_START_RATE_PER_MS for this round trip. */
function slowStartStep(limit: number, rttMs: number): number {
  const paced = Number.isFinite(rttMs) && rttMs > 0 ? Math.floor(SLOW_START_RATE_PER_MS * rttMs) : 0;
  return Math.max(limit, paced - limit);
}

/**
 * Size classes, so that a large upload's longer time is not read as queueing: each class of body
 * size (powers of 4 from 64 KiB) keeps its own no-load minimum.
 */
function sizeClassOf(bytes: number | undefined): number {
  if (bytes === undefined || !(bytes > 64 * 1024)) return 0;
  return Math.min(8, Math.floor(Math.log(bytes / (64 * 1024)) / Math.log(4)) + 1);
}

// ── Where the last run left its window ───────────────────────────────────────────────────────────
// Kept per client for ten minutes, so that its next run starts there.

/**
 * How long a client keeps what a run's window learnt. A service's capacity and the path to it
 * change over minutes; a run this long after the last one starts as against a service never seen.
 */
const WINDOW_MEMORY_MS = 10 * 60_000;

interface Kept extends LearntWindow {
  at: number;
}

/**
 * What the last run of each operation learnt of its window, kept by one client for its next run,
 * as TCP keeps a path's metrics for the next connection to the same host: a process that publishes
 * every minute would otherwise climb from the start window every time, a round trip per doubling,
 * which over a long link is most of a small run.
 */
export class WindowMemory {
  readonly #kept = new Map<string, Kept>();
  readonly #now: () => number;
  readonly #keepMs: number;

  constructor(options: { now?: () => number; keepMs?: number } = {}) {
    this.#now = options.now ?? (() => performance.now());
    this.#keepMs = options.keepMs ?? WINDOW_MEMORY_MS;
  }

  /** Where the last run of `operation` left its window, if it ended recently enough. */
  recall(operation: string): LearntWindow | undefined {
    const kept = this.#kept.get(operation);
    if (kept === undefined) return undefined;
    if (this.#now() - kept.at > this.#keepMs) {
      this.#kept.delete(operation);
      return undefined;
    }
    return { limit: kept.limit, knee: kept.knee };
  }

  /**
   * Keeps what a finished run found (`ConcurrencyLimiter.outcome`), from a run whose window could
   * hold at most `max`. A run with nothing to go on leaves the memory as it was. One the service
   * pushed back on is kept whatever its size: a 429 or a queue is news about the service. A run
   * capped below what is kept (a short array) did not test that window: it only keeps it fresh.
   */
  remember(operation: string, outcome: WindowOutcome | undefined, max: number): void {
    if (outcome === undefined) return;
    const now = this.#now();
    const kept = this.#kept.get(operation);
    if (!outcome.pushedBack && kept !== undefined && max < kept.limit && now - kept.at <= this.#keepMs) {
      kept.at = now;
      return;
    }
    this.#kept.set(operation, { limit: outcome.limit, knee: outcome.knee, at: now });
  }
}
