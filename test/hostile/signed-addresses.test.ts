/**
 * A remote service handing out signed addresses on this machine or its network (server-side
 * request forgery). The remote service is played on 127.0.0.1 behind a made-up name, which the
 * client's fetch sends to 127.0.0.1 (as DNS would), so the client believes it talks to a remote host.
 */

import type { FetchLike } from 'push-api-client';
import { UploadError, UploadStoppedError } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { HOSTILE_APP_ID, useHostileService } from '../support/hostile-service.js';
import { useLoopbackServers } from '../support/loopback-server.js';

const start = useHostileService();
const serve = useLoopbackServers();

/** "api.remote.test" is the hostile service on 127.0.0.1; every other address is left alone. */
const remoteDns: FetchLike = (input, init) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  if (url.hostname === 'api.remote.test') url.hostname = '127.0.0.1';
  return fetch(url, init);
};

async function remoteServiceHandingOut(address: (sinkPort: string) => string) {
  const sink: string[] = [];
  const sinkUrl = await serve((req, res) => {
    sink.push(`${req.method} ${req.url}`);
    res.end();
  });
  const sinkPort = new URL(sinkUrl).port;
  const service = await start(({ route }, res) => {
    if (route !== 'upload-urls') return false;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ 'a.csv': address(sinkPort) }));
    return true;
  });
  const remote = service.url.replace('127.0.0.1', 'api.remote.test');
  const client = service.client({ authUrl: remote, baseUrl: remote, allowInsecureHttp: true, fetch: remoteDns });
  return { client, sink, service };
}

describe('signed addresses from a remote service', () => {
  it.each([
    (port: string) => `http://127.0.0.1:${port}/files/a.csv`,
    (port: string) => `http://127.1:${port}/files/a.csv`,
    (port: string) => `http://localhost:${port}/files/a.csv`,
    (port: string) => `http://[::ffff:127.0.0.1]:${port}/files/a.csv`,
    (port: string) => `http://0.0.0.0:${port}/files/a.csv`,
  ])('%s is refused, and nothing reaches it', async (address) => {
    const { client, sink, service } = await remoteServiceHandingOut(address);
    const report = await client.uploads
      .upload(HOSTILE_APP_ID, [{ name: 'a.csv', data: 'secret file' }])
      .catch((e: unknown) => e);
    // A refused address stops the run: its error is the stop's cause.
    expect(report).toBeInstanceOf(UploadStoppedError);
    const error = (report as UploadStoppedError).cause as Error | undefined;
    expect(error).toBeInstanceOf(UploadError);
    expect(error?.message).toMatch(/points into this machine/);
    expect(sink).toEqual([]);
    // The client did talk to the "remote" service: the refusal is about the address, not the setup.
    expect(service.on('upload-urls')).toHaveLength(1);
  });

  it('a signed address with credentials is refused', async () => {
    const { client, sink } = await remoteServiceHandingOut(() => 'http://user:pw1234@files.remote.test/a.csv');
    const error = await client.uploads.getUploadUrls(HOSTILE_APP_ID, ['a.csv']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UploadError);
    expect((error as Error).message).toMatch(/credentials/);
    expect((error as Error).message).not.toContain('pw1234');
    expect(sink).toEqual([]);
  });

  it('a loopback service (the emulator case) may hand out loopback addresses', async () => {
    const service = await start();
    const report = await service.client().uploads.upload(HOSTILE_APP_ID, [{ name: 'a.csv', data: 'x' }]);
    expect(report.files[0]?.error?.message).toBeUndefined();
    expect(report.filesUploaded).toBe(1);
    expect(service.on('storage')).toHaveLength(1);
  });
});
