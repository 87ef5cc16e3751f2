import type { Output } from './output.js';

export interface Interrupt {
  /** Fires on the first Ctrl-C (or SIGTERM): stop taking new work. */
  stop: AbortSignal;
  /** Fires on the second Ctrl-C: abort the work in flight. */
  abort: AbortSignal;
  dispose(): void;
}

/**
 * Two-stage interrupt. The first SIGINT lets in-flight work finish so the checkpoint and rejects
 * are exact; a second one aborts. SIGTERM (cron, CI cancel) is treated like the first Ctrl-C.
 */
export function onInterrupt(output: Output, stoppingMessage: string): Interrupt {
  const stop = new AbortController();
  const abort = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => {
    if (!stop.signal.aborted) {
      output.log(stoppingMessage);
      stop.abort();
    } else if (signal === 'SIGINT' && !abort.signal.aborted) {
      output.log('aborting in-flight requests');
      abort.abort();
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    stop: stop.signal,
    abort: abort.signal,
    dispose() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
