/**
 * Fault injection: make chosen requests fail the way real infrastructure does (an error status,
 * a slow answer, a dropped connection) before or after the service has processed them.
 */
import type { Operation } from './state.js';

/**
 * Which requests a {@link FaultRule} applies to. Every field given must match; an empty match (or
 * none) applies to every request, the token request included.
 */
export interface FaultMatch {
  /** Operation(s) the fault applies to. @default every operation */
  operation?: Operation | readonly Operation[] | undefined;
  /** HTTP method, case-insensitive. @default any */
  method?: string | undefined;
  /** Substring the request path must contain. @default any */
  pathIncludes?: string | undefined;
}

/**
 * One fault: which requests get it, how often, and what happens to them. Give exactly one of
 * `status` or `drop`, or only `delayMs` to slow requests down without failing them.
 */
export interface FaultRule {
  /** Which requests the fault applies to. @default every request */
  match?: FaultMatch | undefined;
  /**
   * How many matching requests get the fault.
   * @default 1, or unlimited when `probability` is given
   */
  times?: number | undefined;
  /** Chance (0..1) that a matching request gets the fault. @default 1 */
  probability?: number | undefined;
  /** Source of randomness for `probability`; pass a seeded one for reproducible runs. @default Math.random */
  random?: (() => number) | undefined;
  /** Answer with this status (200..599) instead of processing the request. @default none */
  status?: number | undefined;
  /**
   * `Retry-After` value sent with `status`: whole seconds, or an HTTP date (any printable ASCII text
   * up to 64 characters, so a malformed one can be sent on purpose). @default not sent
   */
  retryAfter?: number | string | undefined;
  /** Body sent with `status` (objects as JSON). @default the error shape of the operation */
  body?: string | Record<string, unknown> | undefined;
  /** Wait this long (real time) before answering. @default 0 */
  delayMs?: number | undefined;
  /**
   * Drop the connection: `before` the request is processed, or `after` (its effects are kept), which
   * is how a client meets an outcome it cannot know. @default none
   */
  drop?: 'before' | 'after' | undefined;
}

/** What {@link FaultInjector.add} returns: live counters for one rule, and a way to remove it early. */
export interface FaultHandle {
  /** Identifies the rule within its injector. */
  readonly id: number;
  /** Requests this rule has affected so far. */
  readonly hits: number;
  /** Requests it may still affect (Infinity when unlimited). */
  readonly remaining: number;
  /** Removes the rule before it has used up its `times`; removing it twice does nothing. */
  remove(): void;
}

/** The fault chosen for one request. */
export interface ActiveFault {
  rule: FaultRule;
}

interface Entry {
  id: number;
  rule: FaultRule;
  remaining: number;
  hits: number;
}

function validate(rule: FaultRule): void {
  if (rule.probability !== undefined && !(rule.probability >= 0 && rule.probability <= 1)) {
    throw new RangeError('fault probability must be between 0 and 1');
  }
  if (rule.times !== undefined && !(Number.isInteger(rule.times) && rule.times > 0) && rule.times !== Infinity) {
    throw new RangeError('fault times must be a positive integer or Infinity');
  }
  if (rule.status !== undefined && !(Number.isInteger(rule.status) && rule.status >= 200 && rule.status <= 599)) {
    throw new RangeError('fault status must be an HTTP status between 200 and 599');
  }
  if (rule.drop !== undefined && rule.drop !== 'before' && rule.drop !== 'after') {
    throw new TypeError("fault drop must be 'before' or 'after'");
  }
  if (rule.status !== undefined && rule.drop !== undefined) {
    throw new TypeError('a fault either answers with a status or drops the connection, not both');
  }
  if (rule.status === undefined && rule.drop === undefined && rule.delayMs === undefined) {
    throw new TypeError('a fault needs a status, a drop or a delayMs');
  }
  if (rule.delayMs !== undefined && !(Number.isFinite(rule.delayMs) && rule.delayMs >= 0)) {
    throw new RangeError('fault delayMs must be a finite, non-negative number');
  }
  // The answer is built when a request meets the rule, where a header or a body that cannot be
  // sent would throw out of handle(): refuse them here, as the HTTP control route does.
  const { retryAfter } = rule;
  if (
    retryAfter !== undefined &&
    !(typeof retryAfter === 'number'
      ? Number.isSafeInteger(retryAfter) && retryAfter >= 0
      : typeof retryAfter === 'string' && /^[\x20-\x7e]{1,64}$/.test(retryAfter))
  ) {
    throw new RangeError('fault retryAfter must be whole seconds (>= 0) or a date of printable ASCII');
  }
  if (rule.body !== undefined && typeof rule.body !== 'string') {
    try {
      JSON.stringify(rule.body);
    } catch (error) {
      throw new TypeError('fault body must be a string or an object JSON can write', { cause: error });
    }
  }
}

/**
 * The most fault rules one emulator holds at once: far more than a test scripts, and a bound on
 * the memory and the per-request scan of a loop that adds rules and never removes them.
 */
export const MAX_FAULT_RULES = 10_000;

/**
 * The fault rules of one emulator (`mock.faults`). Faults are decided before authentication, as
 * they model the infrastructure in front of the service (a gateway answering 503, a reset socket).
 * `mock.reset()` clears them.
 */
export class FaultInjector {
  #entries: Entry[] = [];
  #nextId = 1;
  #injected = 0;

  /**
   * Adds a rule. Rules are tried in the order added; the first that fires decides.
   * @throws {RangeError | TypeError} the rule is inconsistent (a status and a drop, no effect at
   *   all, a probability outside 0..1...) or its answer cannot be sent (a `retryAfter` with a line
   *   break, a `body` JSON cannot write), so that a typo fails the test instead of injecting nothing.
   * @throws {RangeError} 10,000 rules (the most one emulator holds) are active already.
   *
   * @example
   * ```ts
   * import { createPushApiMock } from 'push-api-client/testing/msw';
   *
   * const mock = createPushApiMock();
   * // The next finance request gets a 429 asking to wait one second.
   * mock.faults.add({ match: { operation: 'finance' }, status: 429, retryAfter: 1 });
   * // Every upload PUT loses its connection after the file was stored, until removed.
   * const drops = mock.faults.add({ match: { operation: 'upload' }, drop: 'after', times: Infinity });
   * drops.remove();
   * ```
   */
  add(rule: FaultRule): FaultHandle {
    validate(rule);
    if (this.#entries.length >= MAX_FAULT_RULES) {
      throw new RangeError(
        `the emulator holds at most ${MAX_FAULT_RULES} fault rules at once: remove some (handle.remove(), faults.clear()), or give one rule a number of times`,
      );
    }
    const entry: Entry = {
      id: this.#nextId++,
      rule: { ...rule, match: rule.match ? { ...rule.match } : undefined },
      remaining: rule.times ?? (rule.probability === undefined ? 1 : Infinity),
      hits: 0,
    };
    this.#entries.push(entry);
    return {
      id: entry.id,
      get hits() {
        return entry.hits;
      },
      get remaining() {
        return entry.remaining;
      },
      remove: () => {
        this.#entries = this.#entries.filter((candidate) => candidate !== entry);
      },
    };
  }

  /** Removes every rule and resets the `injected` count. */
  clear(): void {
    this.#entries = [];
    this.#injected = 0;
  }

  /** Rules still active. */
  list(): FaultRule[] {
    return this.#entries.map((entry) => entry.rule);
  }

  /** Faults injected since the last `clear()`. */
  get injected(): number {
    return this.#injected;
  }

  /**
   * Picks the fault for a request, if any, and uses up one of its `times`. Called by the emulator's
   * handler for each request; a test calling it would use up faults meant for the requests.
   * @internal
   */
  pick(operation: Operation | undefined, method: string, path: string): ActiveFault | undefined {
    for (const entry of this.#entries) {
      if (!matches(entry.rule.match, operation, method, path)) continue;
      const { probability } = entry.rule;
      if (probability !== undefined && (entry.rule.random ?? Math.random)() >= probability) continue;
      entry.remaining -= 1;
      entry.hits += 1;
      this.#injected += 1;
      if (entry.remaining <= 0) this.#entries = this.#entries.filter((candidate) => candidate !== entry);
      return { rule: entry.rule };
    }
    return undefined;
  }
}

function matches(match: FaultMatch | undefined, operation: Operation | undefined, method: string, path: string) {
  if (!match) return true;
  if (match.operation !== undefined) {
    const wanted = Array.isArray(match.operation) ? match.operation : [match.operation];
    if (operation === undefined || !wanted.includes(operation)) return false;
  }
  if (match.method !== undefined && match.method.toUpperCase() !== method.toUpperCase()) return false;
  if (match.pathIncludes !== undefined && !path.includes(match.pathIncludes)) return false;
  return true;
}

/** A small seeded generator (mulberry32) for reproducible `probability` faults. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
