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
 * already in `stop`.
 */
export function onInterrupt(output: Output, stoppingMessage: string): Interrupt {
  const interrupts = installInterrupts();
  interrupts.claim((stage) => {
    if (stage === 'stop') output.log(stoppingMessage);
    else if (stage === 'abort') output.log('aborting in-flight requests');
    else output.log('already stopping: the run ends after its report');
  });
  return {
    stop: interrupts.stop,
    abort: interrupts.abort,
    dispose() {
      interrupts.claim(undefined);
    },
  };
}

/** For a command that stops by itself on a signal (the emulator): claims the signals without the two stages. */
export function claimStopSignal(): AbortSignal {
  const interrupts = installInterrupts();
  interrupts.claim(undefined);
  return interrupts.stop;
}
