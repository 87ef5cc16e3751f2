/**
 * What the SDK's in-flight window did during one run, from its hooks: the requests actually in
 * flight (from the `request` and `response` hooks, which every version has) and the limiter's own
 * window (from the `concurrency` hook, where the SDK has one). A client without a `concurrency`
 * hook ignores the key, and the trace then holds no limit points.
 */
import type { PushClientHooks } from '../../src/index.js';

/** A change of the limiter's window, as the `concurrency` hook reports it. */
export interface LimitPoint {
  /** Milliseconds since the run started. */
  tMs: number;
  limit: number;
  reason: string;
  rttMs?: number;
  minRttMs?: number;
}

export interface WindowTrace {
  operation: 'finance' | 'upload';
  durationMs: number;
  /** `[ms since the start, requests in flight]`, one point per change. */
  inFlight: [number, number][];
  limit: LimitPoint[];
}

/** Beyond this many points a trace keeps counting but stops recording (a plot needs no more). */
const MAX_POINTS = 5_000;

/** The `concurrency` hook's event, read loosely: the bench compiles against SDKs with and without it. */
type LooseHooks = PushClientHooks & { concurrency?: (event: unknown) => void };

const round = (ms: number) => Math.round(ms * 10) / 10;

function numberField(event: object, key: string): number | undefined {
  const value = (event as Record<string, unknown>)[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

export class WindowRecorder {
  readonly #operation: WindowTrace['operation'];
  #startedAt = performance.now();
  #inFlight = 0;
  #peak = 0;
  #limitEvents = 0;
  #points: [number, number][] = [];
  #limits: LimitPoint[] = [];

  constructor(operation: WindowTrace['operation']) {
    this.#operation = operation;
  }

  /** Starts the clock and forgets what an earlier run recorded. */
  start(): void {
    this.#startedAt = performance.now();
    this.#inFlight = 0;
    this.#peak = 0;
    this.#limitEvents = 0;
    this.#points = [[0, 0]];
    this.#limits = [];
  }

  /** Hooks to give the client. */
  hooks(): PushClientHooks {
    const hooks: LooseHooks = {
      request: (event) => {
        if (event.operation === this.#operation) this.#move(1);
      },
      response: (event) => {
        if (event.operation === this.#operation) this.#move(-1);
      },
      concurrency: (event: unknown) => this.#limit(event),
    };
    return hooks;
  }

  /** Most requests in flight at once. */
  get peakInFlight(): number {
    return this.#peak;
  }

  /** `concurrency` events received; 0 from an SDK that does not have the hook. */
  get limitEvents(): number {
    return this.#limitEvents;
  }

  trace(): WindowTrace {
    return {
      operation: this.#operation,
      durationMs: round(performance.now() - this.#startedAt),
      inFlight: this.#points,
      limit: this.#limits,
    };
  }

  #move(by: number): void {
    this.#inFlight += by;
    this.#peak = Math.max(this.#peak, this.#inFlight);
    if (this.#points.length < MAX_POINTS)
      this.#points.push([round(performance.now() - this.#startedAt), this.#inFlight]);
  }

  #limit(event: unknown): void {
    if (typeof event !== 'object' || event === null) return;
    if ((event as { operation?: unknown }).operation !== this.#operation) return;
    const limit = numberField(event, 'limit');
    if (limit === undefined) return;
    this.#limitEvents++;
    if (this.#limits.length >= MAX_POINTS) return;
    const reason = (event as { reason?: unknown }).reason;
    const rttMs = numberField(event, 'rttMs');
    const minRttMs = numberField(event, 'minRttMs');
    this.#limits.push({
      tMs: round(performance.now() - this.#startedAt),
      limit,
      reason: typeof reason === 'string' ? reason : 'unknown',
      ...(rttMs !== undefined && { rttMs: round(rttMs) }),
      ...(minRttMs !== undefined && { minRttMs: round(minRttMs) }),
    });
  }
}
