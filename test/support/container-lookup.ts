import type { LookupFunction } from 'node:net';

/**
 * A name lookup that knows one name, as a docker-compose network does: `name` resolves to
 * `address` (another loopback address standing in for the other container) and every other name
 * fails, so a test can never reach beyond this machine.
 */
export function containerLookup(name: string, address: string): LookupFunction {
  return (hostname, options, callback) => {
    if (hostname !== name) {
      const error = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return void callback(error as NodeJS.ErrnoException, '', 4);
    }
    if ((options as { all?: boolean }).all) {
      return void (callback as unknown as (e: null, all: { address: string; family: number }[]) => void)(null, [
        { address, family: 4 },
      ]);
    }
    callback(null, address, 4);
  };
}
