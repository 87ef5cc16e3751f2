/** Workers and edge runtimes cannot load a package synchronously on demand: tracing is Node's only. */
import { ConfigurationError } from '../errors.js';

export type OpenTelemetry = never;

export const OPENTELEMETRY_PEER = '@opentelemetry/api';

export function loadOpenTelemetry(): OpenTelemetry {
  throw new ConfigurationError(
    `PushClient: tracing: true needs ${OPENTELEMETRY_PEER}, which this build for workers and edge runtimes does not load`,
  );
}
