/** A redirect to another origin never carries the Authorization header, over real HTTP on 127.0.0.1. */
import type { IncomingHttpHeaders } from 'node:http';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { useLoopbackServers } from '../support/loopback-server.js';
import { SAMPLE_RECORD } from '../support/records.js';

const serve = useLoopbackServers();
let emulator: RunningEmulator;
let redirectorUrl = '';
const seenByTarget: IncomingHttpHeaders[] = [];

beforeEach(async () => {
  emulator = await startEmulator();
  seenByTarget.length = 0;
  // The other origin: records what it receives, answers like the service.
  const targetUrl = (
    await serve((req, res) => {
      seenByTarget.push(req.headers);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}');
    })
  ).replace('127.0.0.1', 'localhost');
  // The data API answers every request with a 307 to the other origin.
  redirectorUrl = await serve((req, res) => {
    res.writeHead(307, { location: `${targetUrl}${req.url ?? '/'}` }).end();
  });
});
afterEach(async () => {
  await emulator.close();
});

describe('redirects to another origin', () => {
  it('a GET redirected to another origin is followed without the Authorization header', async () => {
    const client = clientFor(emulator, { baseUrl: redirectorUrl, maxRetries: 0 });
    // The other origin answers {"success":true}, which is no address map: the call fails after the hop.
    await client.uploads.getUploadUrls(emulator.mock.appId, ['a.csv']).catch(() => undefined);
    expect(seenByTarget).toHaveLength(1);
    expect(seenByTarget[0]?.authorization).toBeUndefined();
    const tokens = emulator.mock.state.tokens.map((t) => t.token);
    expect(tokens.length).toBeGreaterThan(0);
    for (const token of tokens) expect(JSON.stringify(seenByTarget)).not.toContain(token);
  });

  it('a POST redirected to another origin is either refused or sent without the Authorization header', async () => {
    const client = clientFor(emulator, { baseUrl: redirectorUrl, maxRetries: 0 });
    await client.finance.publishBatch(emulator.mock.appId, [SAMPLE_RECORD]).catch(() => undefined);
    for (const headers of seenByTarget) expect(headers.authorization).toBeUndefined();
  });
});
