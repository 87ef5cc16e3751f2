import type { PushClient, SendingBatch } from 'push-api-client';
import { AbortError, PublishStoppedError } from 'push-api-client';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { describe, expect, it } from 'vitest';
import { expectAccounted } from '../support/accounting.js';
import { clientFor } from '../support/clients.js';
import { HOSTILE_APP_ID, HOSTILE_TOKEN, useHostileService } from '../support/hostile-service.js';
import { financeRecords, toAsync } from '../support/records.js';

const startService = useHostileService();

/**
 * Publishes 20 records in two batches, one at a time. Batch 1's `onBatchSending` is a slow durable
 * write: `slowRefreshes()` makes the token endpoint slow, 1.1 s pass (the 2 s token crosses its
 * refresh point), and another caller starts the refresh. Says, as each batch settled, whether that
 * refresh had been answered yet; resolves once it has.
 */
async function publishWithRefreshDuringAnnouncement(client: PushClient, appId: string, slowRefreshes: () => void) {
  let refresh: Promise<unknown> | undefined;
  let refreshed = false;
  const refreshedWhenSettled: boolean[] = [];
  const report = await client.finance.publish(appId, financeRecords(20), {
    batchSize: 10,
    concurrency: 1,
    onBatchSending: async (batch) => {
      if (batch.index !== 1) return;
      slowRefreshes();
      await new Promise((resolve) => setTimeout(resolve, 1100));
      refresh = client.tokens.getToken().then(() => {
        refreshed = true;
      });
    },
    onBatchSettled: () => {
      refreshedWhenSettled.push(refreshed);
    },
  });
  await refresh;
  expect(refreshed).toBe(true);
  return { report, refreshedWhenSettled };
}

describe('onBatchSending', () => {
  it('is called once per batch, with its input indexes, before the service has stored it', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    const announced: SendingBatch[] = [];
    const storedWhenAnnounced: number[] = [];
    const report = await client.finance.publish(mock.appId, toAsync(financeRecords(25)), {
      batchSize: 10,
      concurrency: 1,
      onBatchSending: (batch) => {
        announced.push(batch);
        storedWhenAnnounced.push(mock.state.recordCount(mock.appId));
      },
    });
    expect(report.recordsSent).toBe(25);
    expect(announced.map((batch) => [batch.index, batch.recordCount])).toEqual([
      [0, 10],
      [1, 10],
      [2, 5],
    ]);
    expect(announced[2]?.indexes).toEqual([20, 21, 22, 23, 24]);
    expect(storedWhenAnnounced).toEqual([0, 10, 20]);
  });

  it('is called only once the batch has its token: a batch waiting for a slow token endpoint is not announced', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    mock.faults.add({ match: { operation: 'token' }, delayMs: 200 });
    const issuedWhenAnnounced: number[] = [];
    const report = await client.finance.publish(mock.appId, financeRecords(60), {
      batchSize: 10,
      concurrency: 3,
      onBatchSending: () => {
        issuedWhenAnnounced.push(mock.state.tokens.length);
      },
    });
    expect(report.recordsSent).toBe(60);
    // No batch was announced while the token was on its way: it would have been reserved, and not sent.
    expect(issuedWhenAnnounced).toEqual([1, 1, 1, 1, 1, 1]);
  });

  it('leaves with the token it was announced with: a refresh begun during the callback does not hold it back', async () => {
    // Tokens live 2 s and are refreshed after 1 s; the refresh's answer is held 1.5 s.
    const mock = createPushApiMock({ tokenTtlSeconds: 2 });
    const client = clientFor(mock, { refreshMarginMs: 1000 });
    const { report, refreshedWhenSettled } = await publishWithRefreshDuringAnnouncement(client, mock.appId, () =>
      mock.faults.add({ match: { operation: 'token' }, delayMs: 1500 }),
    );
    expect(report.recordsSent).toBe(20);
    expect(mock.state.recordCount(mock.appId)).toBe(20);
    // Batch 1 was sent, and answered, while the refresh was still on its way.
    expect(refreshedWhenSettled).toEqual([false, false]);
  });

  it('leaves with its token even when the token ran out during the callback: the service, not the clock, refuses it', async () => {
    // Tokens live 1 s. Batch 1's callback takes 1.2 s, and the refresh it starts is answered after
    // 1.5 s: the batch, said to be leaving, must not wait for that refresh before its request leaves.
    const mock = createPushApiMock({ tokenTtlSeconds: 1 });
    const client = clientFor(mock, { refreshMarginMs: 100 });
    const report = await client.finance.publish(mock.appId, financeRecords(20), {
      batchSize: 10,
      concurrency: 1,
      onBatchSending: async (batch) => {
        if (batch.index !== 1) return;
        mock.faults.add({ match: { operation: 'token' }, delayMs: 1500 });
        await new Promise((resolve) => setTimeout(resolve, 1200));
        void client.tokens.getToken().catch(() => {});
      },
    });
    expect(report.recordsSent).toBe(20);
    const seen = mock.state.requests.map((request) => `${request.operation} ${request.status}`);
    // Batch 1 left with the old token and met a 401 before the refresh was answered; then it was sent again.
    expect(seen).toEqual(['token 200', 'finance 200', 'finance 401', 'token 200', 'finance 200']);
    expect(mock.state.recordCount(mock.appId)).toBe(20);
  });

  it('leaves with its token also when the endpoint hands out again a token that met a 401', async () => {
    // The service issues the same token every time (2 s lifetime, refreshed after 1 s), and refuses
    // the first finance request once; refreshes are held 1.5 s once batch 1 is being announced.
    let slowRefresh = false;
    const service = await startService((request, res) => {
      if (request.route === 'token') {
        const answer = () =>
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ access_token: HOSTILE_TOKEN, token_type: 'Bearer', expires_in: 2 }));
        if (slowRefresh) setTimeout(answer, 1500);
        else answer();
        return true;
      }
      if (request.route === 'finance' && request.hit === 1) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"success":false}');
        return true;
      }
      return false;
    });
    const client = service.client({ refreshMarginMs: 1000 });
    const { report, refreshedWhenSettled } = await publishWithRefreshDuringAnnouncement(client, HOSTILE_APP_ID, () => {
      slowRefresh = true;
    });
    expect(report.recordsSent).toBe(20);
    // Batch 0: the 401, then the same token again; batch 1 sent with it while the refresh was on its way.
    expect(service.on('finance').map((request) => request.authorization)).toEqual(
      Array(3).fill(`Bearer ${HOSTILE_TOKEN}`),
    );
    expect(refreshedWhenSettled).toEqual([false, false]);
    expect(service.on('token')).toHaveLength(3);
  });

  it('never has more than `concurrency` batches announced and unsettled, however far the input is read', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    mock.faults.add({ match: { operation: 'finance' }, times: 6, delayMs: 30 });
    let inFlight = 0;
    let most = 0;
    const report = await client.finance.publish(mock.appId, toAsync(financeRecords(200)), {
      batchSize: 10,
      concurrency: 3,
      onBatchSending: async () => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        inFlight++;
        most = Math.max(most, inFlight);
      },
      onBatchSettled: () => {
        inFlight--;
      },
    });
    expect(report.recordsSent).toBe(200);
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(3);
    expect(inFlight).toBe(0);
  });

  it('an abort while it runs: that batch is not sent, gets no onBatchSettled, and counts as not read', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    const controller = new AbortController();
    const settled: number[] = [];
    const error = await client.finance
      .publish(mock.appId, financeRecords(50), {
        batchSize: 10,
        concurrency: 1,
        signal: controller.signal,
        onBatchSending: (batch) => {
          if (batch.index === 2) controller.abort();
        },
        onBatchSettled: (batch) => {
          settled.push(batch.index);
        },
      })
      .then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
    expect(error).toBeInstanceOf(PublishStoppedError);
    expect((error as PublishStoppedError).cause).toBeInstanceOf(AbortError);
    const { report } = error as PublishStoppedError;
    expect(settled).toEqual([0, 1]);
    expect(mock.state.recordCount(mock.appId)).toBe(20);
    expect(report.recordsSent).toBe(20);
    expect(report.recordsNotRead).toBe(30);
    expectAccounted(report, 50);
  });

  it('a throw stops the run: that batch is not sent and counts as not read', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    const failure = new Error('checkpoint disk full');
    let calls = 0;
    const error = await client.finance
      .publish(mock.appId, financeRecords(50), {
        batchSize: 10,
        concurrency: 1,
        onBatchSending: () => {
          calls++;
          if (calls === 2) throw failure;
        },
      })
      .then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
    expect(error).toBeInstanceOf(PublishStoppedError);
    expect((error as PublishStoppedError).cause).toBe(failure);
    const { report } = error as PublishStoppedError;
    expect(report.recordsSent).toBe(10);
    expect(mock.state.recordCount(mock.appId)).toBe(10);
    expect(report.batches).toHaveLength(1);
    expectAccounted(report, 50);
  });
});
