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
    // `require` itself is no test: the ESM bundle has a shim by that name that refuses packages.
    // The CJS build has no `import.meta.url`, and the ESM build no `__filename`.
    const from = typeof __filename === 'string' ? __filename : import.meta.url;
    return createRequire(from)(OPENTELEMETRY_PEER) as OpenTelemetry;
  } catch (error) {
    throw new ConfigurationError(
      `PushClient: tracing: true needs the optional peer dependency ${OPENTELEMETRY_PEER}; install it (npm install ${OPENTELEMETRY_PEER})`,
      { cause: error },
    );
  }
}
