import { abortErrorFrom, delay, WakeList } from '../internal/waits.js';
import type { RateBudget } from './rate-budget.js';

/**
 * A publish run's default rate budget: what it learns from the service's 429s (and 503s). The
 * in-flight window itself is the run's concurrency limiter (src/run/engine.ts),
 * which halves on the same answers; this adds what a window alone cannot do:
 * - a 429 pauses every sender until the `Retry-After` deadline, stretched by up to a tenth at
 *   random, so that nobody keeps knocking while the service has said "wait", and so that
 *   processes refused together do not all come back at the same instant. 429s answering requests
 *   sent before the pause belong to the same event and change nothing more;
 * - budget: the requests accepted between two pauses are what the service allows per period.
 *   In the next period no more requests are put in flight than that budget has left (at least
 *   one). Requests in flight when a budget runs out each earn a 429, so this keeps the 429s of a
 *   period to about one. A period that passes without a 429 forgets the budget;
 * - client-side throttling (`ClientThrottle`, below): once refusals pass about a tenth of what the
 *   service accepts, new requests are held back a short while at random, so that processes sharing
 *   a limit without sharing a budget stay polite.
 *
 * With `adaptive: false` there is no pause, budget or throttle: each request waits on its own.
 */
export interface AdaptiveLimitOptions {
  /** The most requests in flight. */
  max: number;
  /** `false`: no pause, budget or throttle. @default true */
  adaptive?: boolean;
  /** Shortest rate-limit period assumed when forgetting a learned budget. @default 1000 */
  minPeriodMs?: number;
  /** Clock in ms, injectable for tests. @default Date.now */
  now?: () => number;
  /** Source of randomness in [0, 1), for the jitter and the throttle. @default Math.random */
  random?: () => number;
}

/** The most a pause is stretched past `Retry-After`, as a fraction of it. */
const PAUSE_JITTER = 0.1;
/**
 * How long a request held back by the throttle waits before it draws again (jittered ±50 %): a
 * tenth of the wait the service last asked for, at most 50 ms. A service that asks for no wait
 * gets no throttle: holding back for nothing would only spin.
 */
const MAX_HOLD_MS = 50;

export class AdaptiveLimit implements RateBudget {
  readonly max: number;
  readonly adaptive: boolean;
  #inFlight = 0;
  #pausedUntil = 0;
  /** Requests the service accepted in the last period between two pauses; undefined when unknown. */
  #budget: number | undefined;
  #budgetUntil = 0;
  #acceptedInPeriod = 0;
  #startedInPeriod = 0;
  readonly #minPeriodMs: number;
  readonly #now: () => number;
  readonly #random: () => number;
  readonly #throttle: ClientThrottle;
  /** The wait the service asked for with its last 429. */
  #lastWaitMs = 0;
  /** Senders waiting for a free slot; at most one per worker, so bounded by the concurrency. */
  readonly #waiters = new WakeList();

  constructor(options: AdaptiveLimitOptions) {
    this.max = Math.max(1, Math.floor(options.max));
    this.adaptive = options.adaptive ?? true;
    this.#minPeriodMs = options.minPeriodMs ?? 1000;
    this.#now = options.now ?? Date.now;
    this.#random = options.random ?? Math.random;
    this.#throttle = new ClientThrottle({ now: this.#now, random: this.#random });
  }

  /** The learned per-period budget, when a 429 has taught one and it is still current. */
  get budget(): number | undefined {
    return this.#budget !== undefined && this.#now() < this.#budgetUntil ? this.#budget : undefined;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** Milliseconds until senders may start again; 0 when not paused. */
  get pauseRemainingMs(): number {
    return Math.max(0, this.#pausedUntil - this.#now());
  }

  /** The probability that the client-side throttle holds the next request back. */
  get holdProbability(): number {
    return this.adaptive ? this.#throttle.holdProbability : 0;
  }

  /** How many requests may be in flight right now. */
  get limit(): number {
    const budget = this.budget;
    if (budget === undefined) return this.max;
    return Math.max(1, Math.min(this.max, budget - this.#startedInPeriod + this.#inFlight));
  }

  /** Waits for a slot (the end of any pause, the throttle, the budget). Rejects with AbortError when the signal fires. */
  async acquire(signal?: AbortSignal): Promise<void> {
    let held = false;
    for (;;) {
      if (signal?.aborted) throw abortErrorFrom(signal);
      const pause = this.pauseRemainingMs;
      if (pause > 0) {
        await delay(pause, signal);
        continue;
      }
      const holdMs = Math.min(MAX_HOLD_MS, this.#lastWaitMs / 10);
      if (this.adaptive && holdMs > 0 && this.#throttle.shouldHold(!held)) {
        held = true;
        await delay(holdMs * (0.5 + this.#random()), signal);
        continue;
      }
      if (this.#inFlight < this.limit) {
        this.#inFlight++;
        this.#startedInPeriod++;
        return;
      }
      await this.#waiters.wait(signal);
    }
  }

  /**
   * Takes a slot when one is free at once: no pause, no throttle that could hold the request, room
   * in the budget. False, with nothing changed, when `acquire` would have to decide or wait.
   */
  tryAcquire(): boolean {
    if (this.pauseRemainingMs > 0 || (this.adaptive && this.#lastWaitMs > 0)) return false;
    if (this.#inFlight >= this.limit) return false;
    this.#inFlight++;
    this.#startedInPeriod++;
    return true;
  }

  /** Gives a slot back, whatever the outcome of its request. */
  release(): void {
    this.#inFlight = Math.max(0, this.#inFlight - 1);
    this.#waiters.wakeAll();
  }

  /** A request was accepted: count it against the period. */
  onSuccess(): void {
    if (!this.adaptive) return;
    this.#acceptedInPeriod++;
    this.#throttle.onAccepted();
    this.#waiters.wakeAll();
  }

  /**
   * The service said "too many requests". The first 429 of an event takes the requests accepted
   * since the last pause as the budget, and pauses every sender for `retryAfterMs` plus jitter: the
   * server's Retry-After, or, for a 503 the client sends again, its backoff delay. A 429 without
   * Retry-After pauses nobody and holds nothing back: the request waits out its own backoff.
   * `willRetry`: the request is re-sent when the pause ends, so it counts against the next period.
   */
  onRateLimited(retryAfterMs: number | undefined, willRetry = false): void {
    if (!this.adaptive) return;
    const now = this.#now();
    const waitMs = retryAfterMs !== undefined && Number.isFinite(retryAfterMs) ? Math.max(0, retryAfterMs) : 0;
    this.#throttle.onRefused(waitMs);
    this.#lastWaitMs = waitMs;
    if (now >= this.#pausedUntil) {
      // A new event: requests sent before it was noticed may still answer 429; those join it.
      if (this.#acceptedInPeriod > 0) this.#budget = this.#acceptedInPeriod;
      this.#acceptedInPeriod = 0;
      this.#startedInPeriod = 0;
      this.#pausedUntil = now + waitMs * (1 + PAUSE_JITTER * this.#random());
    }
    this.#pausedUntil = Math.max(this.#pausedUntil, now + waitMs);
    this.#budgetUntil = this.#pausedUntil + 2 * Math.max(this.#minPeriodMs, waitMs);
    if (willRetry) this.#startedInPeriod++;
  }
}

// Client-side adaptive throttling, from Google's SRE book ("Handling Overload"): a client that
// keeps count of the requests it makes and of those the service accepts holds a new request back
// with probability `max(0, (requests - K × accepts) / (requests + 1))`. Processes that share a
// rate limit without talking to each other then each send about K times what the service accepts
// from them, so refusals stay near `1 - 1/K` of their requests; without it, each process finds
// the limit by hitting it, and a fleet's refusals add up.
//
// The book drops the request held back; a publish must not lose a record, so here it waits a
// short jittered while and draws again. A request held back counts once as a request the service
// did not take, as the book counts the requests it drops; its later draws do not count again,
// or the holds of a few waiting requests would feed the probability on their own and never let
// it fall. Only outcomes that speak of the rate limit are counted: an accepted request, a 429 or a 503.

/** Requests sent per request accepted that the throttle lets through: refusals settle near 1 - 1/K (about 9 %). */
const K = 1.1;
/** The shortest history the counts cover; the book uses minutes, a publish run lasts seconds. */
const MIN_HISTORY_MS = 2_000;
/**
 * The most a draw holds back: a held request counts as a request, so before any acceptance the
 * probability would creep towards 1 and the wait have no expected end. At 0.9 a request waits
 * about ten holds at worst.
 */
const MAX_HOLD_PROBABILITY = 0.9;

export interface ClientThrottleOptions {
  /** Clock in ms. @default Date.now */
  now?: () => number;
  /** Source of randomness in [0, 1). @default Math.random */
  random?: () => number;
}

/** Counts of one half of the history. */
interface Bucket {
  since: number;
  requests: number;
  accepts: number;
}

class ClientThrottle {
  readonly #now: () => number;
  readonly #random: () => number;
  #historyMs = MIN_HISTORY_MS;
  #older: Bucket;
  #newer: Bucket;

  constructor(options: ClientThrottleOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#random = options.random ?? Math.random;
    const now = this.#now();
    this.#older = { since: now, requests: 0, accepts: 0 };
    this.#newer = { since: now, requests: 0, accepts: 0 };
  }

  /** The probability that the next request is held back. */
  get holdProbability(): number {
    this.#rotate();
    const requests = this.#older.requests + this.#newer.requests;
    const accepts = this.#older.accepts + this.#newer.accepts;
    return Math.min(MAX_HOLD_PROBABILITY, Math.max(0, (requests - K * accepts) / (requests + 1)));
  }

  /**
   * Draws whether a request waits. `firstDraw`: the request was not held back before; a hold then
   * counts as a request the service did not accept.
   */
  shouldHold(firstDraw: boolean): boolean {
    const hold = this.#random() < this.holdProbability;
    if (hold && firstDraw) this.#newer.requests++;
    return hold;
  }

  onAccepted(): void {
    this.#rotate();
    this.#newer.requests++;
    this.#newer.accepts++;
  }

  /** A 429 or 503; `periodMs` is the wait the service asked for, so that the history spans a few of its periods. */
  onRefused(periodMs: number | undefined): void {
    this.#rotate();
    this.#newer.requests++;
    if (periodMs !== undefined && Number.isFinite(periodMs)) {
      this.#historyMs = Math.max(this.#historyMs, Math.min(4 * periodMs, 300_000));
    }
  }

  /** Two buckets of half the history each: the older is dropped when the newer is full. */
  #rotate(): void {
    const now = this.#now();
    const half = this.#historyMs / 2;
    if (now - this.#newer.since < half) return;
    this.#older = now - this.#newer.since < 2 * half ? this.#newer : { since: now, requests: 0, accepts: 0 };
    this.#newer = { since: now, requests: 0, accepts: 0 };
  }
}
