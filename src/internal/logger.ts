/** Logging through a user's logger, and calling any user callback that may be async, without ever failing a request. */
import type { Logger, LogLevel } from '../http/public-types.js';

/**
 * A user's callback (a hook, a logger method) may be async. One whose promise rejects must not
 * become an unhandled rejection, which ends a Node process: the rejection goes to `onRejected`.
 */
export function ignoreRejection(result: unknown, onRejected: (error: unknown) => void): void {
  if (typeof (result as PromiseLike<unknown> | null)?.then === 'function') {
    Promise.resolve(result).catch(onRejected);
  }
}

/** In order of decreasing detail. */
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'off'];

/** What a level that drops its lines logs with: one function, so that a caller can tell (`drops`). */
const dropLine = (): void => {};

/** The logger used when none is given: drops every line. */
export const silentLogger: Logger = { debug: dropLine, info: dropLine, warn: dropLine, error: dropLine };

/** Whether `logger` drops every line at `level`, so that a caller need not build a line's fields. */
export function drops(logger: Logger, level: keyof Logger): boolean {
  return logger[level] === dropLine;
}

/** pino (and bunyan-style loggers) take the fields first: `info(fields, message)`. */
function takesFieldsFirst(logger: object): boolean {
  return typeof (logger as { bindings?: unknown }).bindings === 'function';
}

/** Logging is best effort: what a logger throws or rejects with is dropped. */
const dropped = (): void => {};

/** Wraps a user's logger so that a throwing, rejecting or partial logger can never fail a request. */
export function safeLogger(logger: Partial<Logger>): Logger {
  const fieldsFirst = takesFieldsFirst(logger);
  const call = (level: keyof Logger) => (message: string, fields?: Record<string, unknown>) => {
    try {
      const method = logger[level] as ((...args: unknown[]) => unknown) | undefined;
      if (typeof method !== 'function') return;
      const result = fieldsFirst ? method.call(logger, fields ?? {}, message) : method.call(logger, message, fields);
      ignoreRejection(result, dropped);
    } catch {
      // Dropped, as a rejection is.
    }
  };
  return { debug: call('debug'), info: call('info'), warn: call('warn'), error: call('error') };
}

/** Keeps the lines at `level` and above; the others are dropped before they are formatted. */
export function filterLogger(logger: Logger, level: LogLevel): Logger {
  const min = LOG_LEVELS.indexOf(level);
  const pass = (at: keyof Logger) => (LOG_LEVELS.indexOf(at) >= min ? logger[at].bind(logger) : dropLine);
  return { debug: pass('debug'), info: pass('info'), warn: pass('warn'), error: pass('error') };
}

function formatFields(fields: Record<string, unknown> | undefined): string {
  if (!fields || Object.keys(fields).length === 0) return '';
  try {
    return ` ${JSON.stringify(fields)}`;
  } catch {
    return ' [fields not serializable]';
  }
}

/**
 * The built-in logger of `logLevel` / `PUSH_LOG`: one line per call on stderr (`console.error`,
 * whatever the level, so that stdout stays the program's own), as
 * `2025-01-31T12:00:00.000Z debug push-api-client request {"operation":"finance",...}`. It gets
 * the same fields as any other logger, which never hold a secret, a token, a header or a query.
 */
export function consoleLogger(write: (line: string) => void = (line) => console.error(line)): Logger {
  const at = (level: keyof Logger) => (message: string, fields?: Record<string, unknown>) =>
    write(`${new Date().toISOString()} ${level} ${message}${formatFields(fields)}`);
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
