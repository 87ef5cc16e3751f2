/**
 * SIGINT, SIGTERM and SIGHUP for the whole process. The entry point installs them before it loads
 * anything else, so that from its first line on a signal never ends the process by the signal
 * (no report, no exit code): it ends the run with exit 130, and `--json` still prints one object.
 *
 * Until a command claims the signals, nothing has been sent, and the first signal ends the run at
 * once (see `unclaimed`). A command with work to finish (a publish, an upload) claims them: the
 * first signal then stops taking new work, the second aborts the work in flight, and later ones
 * change nothing, so that shutdown ends with the same one report and the same exit code.
 *
 * This file imports nothing: it is all the entry point loads before installing the handlers.
 */

/** `stop`: the first signal; `abort`: the second; `again`: any later one, which changes nothing. */
export type InterruptStage = 'stop' | 'abort' | 'again';

export type InterruptListener = (stage: InterruptStage, signal: NodeJS.Signals) => void;

export interface Interrupts {
  /** Fires on the first SIGINT, SIGTERM or SIGHUP. */
  readonly stop: AbortSignal;
  /** Fires on the second. */
  readonly abort: AbortSignal;
  /** Resolves with the first signal if no command had claimed the signals when it came. */
  readonly unclaimed: Promise<NodeJS.Signals>;
  /** Whether a command has claimed the signals; once claimed, they stay claimed until the process ends. */
  readonly claimed: boolean;
  /** Fires `abort` as a second signal would, once `stop` has fired (`--stop-timeout` ran out). */
  abortNow(): void;
  /**
   * Claims the signals for the running command; `listener` hears each one (or none, with
   * `undefined`). Throws {@link EndedByEarlySignal} if the first signal came before any claim.
   */
  claim(listener: InterruptListener | undefined): void;
}

/** Thrown by `claim` in a command that went on while the run was already ending on an early signal. */
class EndedByEarlySignal extends Error {
  override name = 'EndedByEarlySignal';
}

/** One instance per process, shared by every copy of this module (the entry and the program are separate bundles). */
const KEY = Symbol.for('push-api-client.cli.interrupts');

export function installInterrupts(): Interrupts {
  const holder = globalThis as { [KEY]?: Interrupts };
  const existing = holder[KEY];
  if (existing !== undefined) return existing;
  const stop = new AbortController();
  const abort = new AbortController();
  let claimed = false;
  let listener: InterruptListener | undefined;
  let resolveUnclaimed: (signal: NodeJS.Signals) => void = () => {};
  const unclaimed = new Promise<NodeJS.Signals>((resolve) => {
    resolveUnclaimed = resolve;
  });
  const onSignal = (signal: NodeJS.Signals): void => {
    const stage: InterruptStage = !stop.signal.aborted ? 'stop' : !abort.signal.aborted ? 'abort' : 'again';
    if (stage === 'stop') stop.abort();
    else if (stage === 'abort') abort.abort();
    if (!claimed) {
      if (stage === 'stop') resolveUnclaimed(signal);
      return;
    }
    listener?.(stage, signal);
  };
  // Never removed: a handler that went away would let a late signal end the process by the signal.
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // A closed terminal or ssh session, or a supervisor's `kill -HUP`: a request to stop, like SIGTERM.
  process.on('SIGHUP', onSignal);
  const interrupts: Interrupts = {
    stop: stop.signal,
    abort: abort.signal,
    unclaimed,
    get claimed() {
      return claimed;
    },
    abortNow() {
      if (stop.signal.aborted && !abort.signal.aborted) abort.abort();
    },
    claim(next) {
      // The first signal came before any claim: the run is ending with exit 130 and nothing was
      // sent; the command must not start now.
      if (stop.signal.aborted && !claimed) throw new EndedByEarlySignal();
      claimed = true;
      listener = next;
    },
  };
  holder[KEY] = interrupts;
  return interrupts;
}
