/**
 * Listening to a caller's AbortSignal without growing it. A service passes one shutdown signal to
 * every call for days. Each call's listener must go when the call settles, and many calls in
 * flight must not pile listeners on the signal: Node warns past 10 (MaxListenersExceededWarning)
 * and `AbortSignal.any` keeps every combined signal reachable from a long-lived source
 * (nodejs/node#55351, #54614). So the package adds at most one listener per signal, which calls
 * the callbacks registered here, and removes it when the last callback is unregistered.
 */

interface Fanout {
  readonly callbacks: Set<() => void>;
  readonly listener: () => void;
}

const fanouts = new WeakMap<AbortSignal, Fanout>();

function fanoutOf(signal: AbortSignal): Fanout {
  const existing = fanouts.get(signal);
  if (existing) return existing;
  const callbacks = new Set<() => void>();
  const listener = () => {
    fanouts.delete(signal);
    const due = [...callbacks];
    callbacks.clear();
    let failure: { error: unknown } | undefined;
    for (const callback of due) {
      try {
        callback();
      } catch (error) {
        failure ??= { error };
      }
    }
    // One throwing callback must not keep the others from hearing of the abort.
    if (failure) throw failure.error;
  };
  const fanout = { callbacks, listener };
  fanouts.set(signal, fanout);
  signal.addEventListener('abort', listener, { once: true });
  return fanout;
}

/**
 * Calls `callback` once when `signal` aborts (at once when it already has); returns the function
 * that unregisters it. Call that when the waiting is over, whichever way it ended.
 */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  if (signal.aborted) {
    callback();
    return () => {};
  }
  const fanout = fanoutOf(signal);
  // A wrapper, so that one function registered twice is two registrations.
  const entry = () => callback();
  fanout.callbacks.add(entry);
  return () => {
    if (!fanout.callbacks.delete(entry) || fanout.callbacks.size > 0) return;
    signal.removeEventListener('abort', fanout.listener);
    if (fanouts.get(signal) === fanout) fanouts.delete(signal);
  };
}
