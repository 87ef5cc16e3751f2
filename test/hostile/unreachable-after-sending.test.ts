/**
 * "Host unreachable" and "network unreachable" mean nothing was sent only when the connection
 * could not be made. On a connection already open, Linux reports them too, on a read or a write
 * (an ICMP error met by a retransmission or a keep-alive probe, a route gone when a VPN drops),
 * after the request may have reached the service. The runtime's error says which: Node's system
 * errors name their `syscall` (`connect`, or `read` / `write`). The shapes are Node's own; the
 * request itself goes to a real loopback service, which stores the batch.
 */
import type { FetchLike, PublishReport } from 'push-api-client';
import { ConnectionError } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { HOSTILE_APP_ID, useHostileService } from '../support/hostile-service.js';
import { SAMPLE_RECORD } from '../support/records.js';

const start = useHostileService();

/** Node's error for `code` met by `syscall`, as fetch wraps it. */
function nodeFailure(code: string, errno: number, syscall: string, address = ''): TypeError {
  const cause = Object.assign(new Error(`${syscall} ${code}${address}`), { code, errno, syscall });
  return new TypeError('fetch failed', { cause });
}

/** Sends each finance request for real, then reports the connection as failed with `code` on a read. */
function failingAfterSending(code: string, errno: number): FetchLike {
  return async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const response = await fetch(input, init);
    if (!url.endsWith('/finance')) return response;
    await response.body?.cancel();
    throw nodeFailure(code, errno, 'read');
  };
}

/** Fails each finance request as a connection that could not be made, sending nothing. */
function failingToConnect(code: string, errno: number): FetchLike {
  return async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (url.endsWith('/finance')) throw nodeFailure(code, errno, 'connect', ' 10.0.0.1:443');
    return fetch(input, init);
  };
}

const codes: [code: string, errno: number][] = [
  ['EHOSTUNREACH', -113],
  ['ENETUNREACH', -101],
  ['EHOSTDOWN', -112],
  ['ENETDOWN', -100],
];

async function publishThrough(fetchFn: FetchLike) {
  const service = await start();
  const client = service.client({ fetch: fetchFn, maxRetries: 2, backoff: { initialDelayMs: 0, maxDelayMs: 0 } });
  const report = await client.finance
    .publish(HOSTILE_APP_ID, [SAMPLE_RECORD])
    .catch((error: { report?: PublishReport }) => error.report);
  return { service, batch: report?.batches[0] };
}

describe.each(codes)('%s', (code, errno) => {
  it('on an open connection (a read), after the batch reached the service: unknown, never re-sent', async () => {
    const { service, batch } = await publishThrough(failingAfterSending(code, errno));
    expect(service.on('finance')).toHaveLength(1);
    expect(batch?.status).toBe('unknown');
    expect(batch?.error).toBeInstanceOf(ConnectionError);
    expect((batch?.error as ConnectionError | undefined)?.requestMaybeSent).toBe(true);
  });

  it('while connecting: failed (nothing was sent), after its retries', async () => {
    const { service, batch } = await publishThrough(failingToConnect(code, errno));
    expect(service.on('finance')).toHaveLength(0);
    expect(batch?.status).toBe('failed');
    expect((batch?.error as ConnectionError | undefined)?.requestMaybeSent).toBe(false);
  });
});
