/**
 * Loads the optional peer `@opentelemetry/api`, only when `tracing: true`, and synchronously, so
 * that a missing peer is a `ConfigurationError` from `new PushClient(...)` in ESM as in CJS.
 */
import { createRequire } from 'node:module';
import type * as OpenTelemetryApi from '@opentelemetry/api';
import { ConfigurationError } from '../errors.js';

export type OpenTelemetry = typeof OpenTelemetryApi;

export const OPENTELEMETRY_PEER = '@opentelemetry/api';

export function loadOpenTelemetry(): OpenTelemetry {
  try {
    // The CJS build has its own `require`; the ESM build makes one.
    const load = typeof require === 'function' ? require : createRequire(import.meta.url);
    return load(OPENTELEMETRY_PEER) as OpenTelemetry;
  } catch (error) {
    throw new ConfigurationError(
      `PushClient: tracing: true needs the optional peer dependency ${OPENTELEMETRY_PEER}; install it (npm install ${OPENTELEMETRY_PEER})`,
      { cause: error },
    );
  }
}
