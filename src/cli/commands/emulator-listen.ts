/**
 * Why `push-api emulator` could not listen, as a usage error: the port or the address it was given
 * is the thing to change, and the operator needs to hear that, not Node's `listen EADDRINUSE`.
 */
import { UsageError } from '../exit-codes.js';

function hostForUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** A {@link UsageError} for the listen errors a flag causes; the error itself for any other. */
export function listenError(error: unknown, host: string, port: number): unknown {
  const code = error instanceof Error && 'code' in error ? error.code : undefined;
  const where = `${hostForUrl(host)}:${port}`;
  switch (code) {
    case 'EADDRINUSE':
      return new UsageError(
        `--port ${port}: ${where} is in use by another process; choose another port, or --port 0 for a free one`,
      );
    case 'EACCES':
      return new UsageError(`--port ${port}: not allowed to listen on ${where}; choose a port above 1023`);
    case 'EADDRNOTAVAIL':
      return new UsageError(`--host ${host}: not an address of this machine`);
    default:
      return error;
  }
}
