/**
 * A fetch that plays DNS for made-up remote names, so that a service on 127.0.0.1 looks remote to
 * the client: each name in `names` is sent to 127.0.0.1. Any other host must be a loopback literal
 * (the test's own sinks); an attempt to reach anything else is recorded and fails without a packet
 * leaving the machine, so a broken address rule shows as a recorded attempt, never as real traffic.
 */
import type { FetchLike } from 'push-api-client';

const LOOPBACK_LITERAL =
  /^(?:127\.\d+\.\d+\.\d+|0\.0\.0\.0|localhost\.?|\[::1\]|\[::\]|\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\])$/i;

export interface RemoteDns {
  fetch: FetchLike;
  /** Hosts the client tried that are neither mapped nor loopback: must stay empty. */
  elsewhere: string[];
}

export function remoteDns(names: readonly string[]): RemoteDns {
  const elsewhere: string[] = [];
  const mapped = new Set(names.map((name) => name.toLowerCase()));
  return {
    elsewhere,
    fetch: (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (mapped.has(url.hostname)) url.hostname = '127.0.0.1';
      else if (!LOOPBACK_LITERAL.test(url.hostname)) {
        elsewhere.push(url.host);
        return Promise.reject(new TypeError(`test network guard: ${url.host} is not loopback`));
      }
      return fetch(url, init);
    },
  };
}
