/**
 * The arithmetic of the adaptive window, apart from any waiting: TCP Vegas, applied to requests.
 *
 * Vegas compares the round-trip time a window of requests takes with the least one seen (the
 * no-load time). When a window of `limit` requests takes `rtt` instead of `minRtt`, about
 * `limit × (1 - minRtt / rtt)` of them are waiting in a queue on the far side. Vegas keeps that
 * queue between `alpha` and `beta` requests: enough to keep the service busy, little enough that
 * the client is not what makes it slow. Below `alpha` the window grows, above `beta` it goes back
 * to what the service handled without queueing plus `alpha`, which is the knee of its latency curve.
 *
 * Why Vegas rather than Gradient2 (Netflix concurrency-limits) or AIMD alone: a publish or an
 * upload is a bounded burst of near-uniform requests from one client, not a long-lived server
 * seeing bursty mixed traffic. The minimum is a sharp, cheap reference there, and one decision per
 * round trip, made on fresh samples only, settles within a band of a few requests instead of
 * drifting with a long-term average. AIMD alone (halving on a 429 or 503) stays as the answer to
 * an explicit "slow down": it is the service's word, where latency is only a hint.
 *
 * Thresholds grow with the logarithm of the window, as Netflix's Vegas does, so that a wide window
 * tolerates the jitter of a real network while a narrow one still reacts to a queue of a few requests.
 */

/** What one round of samples says about the window. */
export type WindowDecision =
  | { kind: 'hold' }
  | { kind: 'grow'; limit: number }
  | { kind: 'shrink'; limit: number; queue: number };

/** Requests allowed to queue at the service before the window stops growing. */
export function alphaFor(limit: number): number {
  return Math.max(2, Math.ceil(2 * Math.log10(Math.max(1, limit))));
}

/** Requests queued at the service past which the window shrinks. */
export function betaFor(limit: number): number {
  return 2 * alphaFor(limit);
}

/**
 * One decision from a round's ratio of round-trip time to its no-load minimum (≥ 1, the round's lower quartile).
 * Below alpha the window doubles until a first latency shrink or push-back (Vegas's slow start),
 * then grows by half up to `knee`, the window that shrink or halving settled on, and by one request per round
 * above it, so that a window that found the knee probes past it gently.
 */
export function decide(limit: number, max: number, ratio: number, knee: number | undefined): WindowDecision {
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
  const step = !fast ? 1 : knee === undefined ? limit : Math.max(1, Math.floor(limit / 2));
  return { kind: 'grow', limit: Math.min(max, limit + step) };
}

/**
 * Size classes, so that a large upload's longer time is not read as queueing: each class of body
 * size (powers of 4 from 64 KiB) keeps its own no-load minimum.
 */
export function sizeClassOf(bytes: number | undefined): number {
  if (bytes === undefined || !(bytes > 64 * 1024)) return 0;
  return Math.min(8, Math.floor(Math.log(bytes / (64 * 1024)) / Math.log(4)) + 1);
}
