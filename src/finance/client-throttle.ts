/**
 * Client-side adaptive throttling, from Google's SRE book ("Handling Overload"): a client that
 * keeps count of the requests it makes and of those the service accepts holds a new request back
 * with probability `max(0, (requests - K × accepts) / (requests + 1))`. Processes that share a
 * rate limit without talking to each other then each send about K times what the service accepts
 * from them, so refusals stay near `1 - 1/K` of their requests; without it, each process finds
 * the limit by hitting it, and a fleet's refusals add up.
 *
 * The book drops the request held back; a publish must not lose a record, so here it waits a
 * short jittered while and draws again. A request held back counts once as a request the service
 * did not take, as the book counts the requests it drops; its later draws do not count again,
 * or the holds of a few waiting requests would feed the probability on their own and never let
 * it fall. Only outcomes that speak of the rate limit are counted: an accepted request, a 429 or a 503.
 */

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

export class ClientThrottle {
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
