/**
 * A publish that pauses longer than a load balancer keeps idle keep-alive connections, then
 * publishes again on the same client. The balancer (a TCP front on 127.0.0.1 before the emulator)
 * either closes the idle connection (FIN: the client hears of it and opens a new one) or resets it
 * when the next request arrives (RST, never forwarded: the service did not see it, but nothing on
 * the client's side can tell that from a service that died while storing it). Every record stays
 * in one honest bucket: never lost, never stored twice without saying so.
 */
import { once } from 'node:events';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PushClient } from 'push-api-client';
import { DEMO_APP_ID, type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectAccounted, timesStored } from '../support/accounting.js';
import { clientFor } from '../support/clients.js';
import { financeRecords } from '../support/records.js';

const IDLE_MS = 150;
let emulator: RunningEmulator;
let balancer: Server;
const sockets = new Set<Socket>();

beforeEach(async () => {
  emulator = await startEmulator({ port: 0 });
});
afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  balancer?.close();
  await emulator.close();
});

/** Starts the balancer; returns its address and how many requests it dropped at arrival. */
async function startBalancer(idle: 'fin' | 'rst'): Promise<{ url: string; dropped: () => number }> {
  let dropped = 0;
  balancer = createServer((client) => {
    const upstream = connect(Number(new URL(emulator.url).port), '127.0.0.1');
    let stale = false;
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        stale = true;
        upstream.destroy();
        if (idle === 'fin') client.end();
      }, IDLE_MS);
    };
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    }
    client.on('close', () => clearTimeout(timer));
    arm();
    client.on('data', (chunk) => {
      if (stale) {
        dropped++;
        client.resetAndDestroy();
        return;
      }
      arm();
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      arm();
      client.write(chunk);
    });
  });
  balancer.listen(0, '127.0.0.1');
  await once(balancer, 'listening');
  return { url: `http://127.0.0.1:${(balancer.address() as AddressInfo).port}`, dropped: () => dropped };
}

function behind(url: string, retryAmbiguous: boolean): PushClient {
  const options = emulator.clientOptions();
  return clientFor(
    { ...options, authUrl: options.authUrl.replace(emulator.url, url), baseUrl: url },
    { retryAmbiguous, backoff: { initialDelayMs: 1, maxDelayMs: 1 } },
  );
}

/** Three publishes of two records each, with a pause past the balancer's idle limit between them. */
async function pausingPipeline(client: PushClient) {
  const reports = [];
  for (let round = 0; round < 3; round++) {
    const report = await client.finance.publish(DEMO_APP_ID, financeRecords(2, round * 2), { batchSize: 2 });
    expectAccounted(report, 2);
    reports.push(report);
    await sleep(IDLE_MS * 2);
  }
  return reports;
}

describe('a pause longer than the balancer keeps an idle connection', () => {
  it('closed with a FIN: the client opens a new connection, and every record is sent once', async () => {
    const { url, dropped } = await startBalancer('fin');
    const reports = await pausingPipeline(behind(url, false));
    expect(reports.map((report) => report.recordsSent)).toEqual([2, 2, 2]);
    expect(dropped()).toBe(0);
    const stored = timesStored(emulator.mock.state.records(DEMO_APP_ID));
    expect([...stored.values()]).toEqual([1, 1, 1, 1, 1, 1]);
  });

  it('reset when the next request arrives: that batch is unknown, stored nowhere, never reported sent', async () => {
    const { url, dropped } = await startBalancer('rst');
    const reports = await pausingPipeline(behind(url, false));
    expect(dropped()).toBeGreaterThan(0);
    const unknown = reports.flatMap((report) => report.batches.filter((batch) => batch.status === 'unknown'));
    expect(unknown.length).toBeGreaterThan(0);
    // The honest bucket: the service never saw these, and the report does not claim it did.
    const stored = timesStored(emulator.mock.state.records(DEMO_APP_ID));
    const sent = reports.reduce((sum, report) => sum + report.recordsSent, 0);
    expect(stored.size).toBe(sent);
    expect([...stored.values()].every((times) => times === 1)).toBe(true);
  });

  it('reset, with retryAmbiguous: the re-send stores it once, reported unknown and stored at least once', async () => {
    const { url, dropped } = await startBalancer('rst');
    const reports = await pausingPipeline(behind(url, true));
    expect(dropped()).toBeGreaterThan(0);
    const batches = reports.flatMap((report) => report.batches);
    const resent = batches.filter((batch) => batch.status === 'unknown');
    expect(resent.length).toBeGreaterThan(0);
    expect(resent.every((batch) => batch.storedAtLeastOnce === true)).toBe(true);
    const stored = timesStored(emulator.mock.state.records(DEMO_APP_ID));
    expect([...stored.values()]).toEqual([1, 1, 1, 1, 1, 1]);
  });
});
