/**
 * Loaded into a CLI process with `NODE_OPTIONS=--import <this file>` by the signal tests: it
 * writes `<SIGNAL_PROBE_FILE>.<signal>` the moment the process adds its first listener for
 * SIGINT or SIGTERM, so that a test can tell, just before sending a signal, whether the CLI's
 * handler is installed. The kernel's view (/proc/<pid>/status) cannot: Node installs a handler of
 * its own for both signals as it starts, which ends the process by the signal. It only observes;
 * the listener is added as asked.
 */
import { writeFileSync } from 'node:fs';

const marker = process.env.SIGNAL_PROBE_FILE;
const watched = new Set(['SIGINT', 'SIGTERM']);
const addListener = process.on;

process.on = function on(event, listener) {
  const result = addListener.call(this, event, listener);
  if (marker && watched.delete(event)) writeFileSync(`${marker}.${event}`, '');
  return result;
};
