import { installInterrupts } from './interrupts.js';
import type { Output } from './output.js';

export interface Interrupt {
  /** Fires on the first Ctrl-C (or SIGTERM): stop taking new work. */
  stop: AbortSignal;
  /** Fires on the second Ctrl-C or SIGTERM: abort the work in flight. */
  abort: AbortSignal;
  /** Stops printing notices; the signals stay claimed, so a late one cannot end the run before its report. */
  dispose(): void;
}

/**
 * Two-stage interrupt for a command that has work to finish. The first SIGINT or SIGTERM lets
 * in-flight work finish so the checkpoint and rejects are exact; a second one aborts it; later
 * ones change nothing. A signal that came before this call (while the command was starting) is
 * already in `stop`. With `stopTimeoutSeconds`, the work in flight is aborted that long after the
 * first signal, as by a second one: a scheduler sends SIGTERM once, then SIGKILL after its grace
 * period, and a run that ends by itself first still writes its report and files and releases its
 * lock, which SIGKILL would leave behind.
 */
export function onInterrupt(output: Output, stoppingMessage: string, stopTimeoutSeconds?: number): Interrupt {
  const interrupts = installInterrupts();
  let timer: NodeJS.Timeout | undefined;
  const startStopTimer = (): void => {
    if (stopTimeoutSeconds === undefined || timer !== undefined) return;
    timer = setTimeout(() => {
      if (interrupts.abort.aborted) return;
      output.log(`--stop-timeout: ${stopTimeoutSeconds} s since the signal; aborting in-flight requests`);
      interrupts.abortNow();
    }, stopTimeoutSeconds * 1000);
    // The timer only shortens a stop: it never keeps a finished run alive.
    timer.unref();
  };
  interrupts.claim((stage) => {
    if (stage === 'stop') {
      output.log(stoppingMessage);
      startStopTimer();
    } else if (stage === 'abort') output.log('aborting in-flight requests');
    else output.log('already stopping: the run ends after its report');
  });
  if (interrupts.stop.aborted) startStopTimer();
  return {
    stop: interrupts.stop,
    abort: interrupts.abort,
    dispose() {
      clearTimeout(timer);
      interrupts.claim(undefined);
    },
  };
}

/** `--stop-timeout`, shared by the commands that stop in two stages. */
export const STOP_TIMEOUT_FLAG = '--stop-timeout <seconds>';
export const STOP_TIMEOUT_HELP =
  'after the first Ctrl-C or SIGTERM, abort the requests still in flight this many seconds later, as a second signal would (default: wait for them)';

/** For a command that stops by itself on a signal (the emulator): claims the signals without the two stages. */
export function claimStopSignal(): AbortSignal {
  const interrupts = installInterrupts();
  interrupts.claim(undefined);
  return interrupts.stop;
}
