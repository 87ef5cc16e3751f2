import type { Logger } from './types.js';

/** The logger used when none is given: drops every line. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** pino (and bunyan-style loggers) take the fields first: `info(fields, message)`. */
function takesFieldsFirst(logger: object): boolean {
  return typeof (logger as { bindings?: unknown }).bindings === 'function';
}

/** Wraps a user's logger so that a throwing or partial logger can never fail a request. */
export function safeLogger(logger: Partial<Logger>): Logger {
  const fieldsFirst = takesFieldsFirst(logger);
  const call = (level: keyof Logger) => (message: string, fields?: Record<string, unknown>) => {
    try {
      const method = logger[level] as ((...args: unknown[]) => void) | undefined;
      if (typeof method !== 'function') return;
      if (fieldsFirst) method.call(logger, fields ?? {}, message);
      else method.call(logger, message, fields);
    } catch {
      // Logging is best effort.
    }
  };
  return { debug: call('debug'), info: call('info'), warn: call('warn'), error: call('error') };
}
