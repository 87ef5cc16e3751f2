import type { PushClient, SendingBatch } from 'push-api-client';
import { AbortError, PublishStoppedError } from 'push-api-client';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { describe, expect, it } from 'vitest';
import { expectAccounted } from '../support/accounting.js';
import { clientFor } from '../support/clients.js';
import { HOSTILE_APP_ID, HOSTILE_TOKEN, useHostileService } from '../support/hostile-service.js';
import { capturingFetch, recordingLogger } from '../support/recorders.js';
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

  it('32 batches announced across the expiry or revocation of their token: one refresh, and the old token never leaves again once refused', async () => {
    // Tokens live 2 s (refreshed 100 ms before). All 32 batches of the first window take their
    // token at once, and their callbacks end together 2.3 s later: every one leaves with a token
    // that ran out (or, in the second case, that the service revoked) during its announcement.
    for (const revoke of [false, true]) {
      const mock = createPushApiMock({ tokenTtlSeconds: 2 });
      const { fetch, seen } = capturingFetch(mock.fetch);
      const logger = recordingLogger();
      const client = clientFor(mock, { refreshMarginMs: 100, fetch, logger });
      let release = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let first: string | undefined;
      const report = await client.finance.publish(mock.appId, financeRecords(64), {
        batchSize: 1,
        concurrency: 32,
        adaptive: false,
        onBatchSending: async () => {
          if (first === undefined) {
            first = (await client.tokens.getToken()).accessToken;
            setTimeout(
              () => {
                if (revoke && first !== undefined) mock.revokeToken(first);
                release();
              },
              revoke ? 300 : 2300,
            );
          }
          await gate;
        },
      });
      expect(report.recordsSent).toBe(64);
      expect(mock.state.recordCount(mock.appId)).toBe(64);
      const answers = mock.state.requests.map((request) => `${request.operation} ${request.status}`);
      // One refresh for them all, not one per refused batch.
      expect(answers.filter((answer) => answer.startsWith('token'))).toEqual(['token 200', 'token 200']);
      const refused = answers.filter((answer) => answer === 'finance 401').length;
      expect(refused).toBeGreaterThan(0);
      expect(refused).toBeLessThanOrEqual(32);
      // Only the first window's first attempts carried the old token: no re-send, no later batch.
      const carried = seen.filter((request) => request.headers.authorization === `Bearer ${first}`);
      expect(carried.filter((request) => request.url.includes('/token')).length).toBe(0);
      expect(carried.length).toBe(refused);
      const bodies = carried.map((request) => request.body);
      expect(new Set(bodies).size).toBe(bodies.length);
      expect(JSON.stringify(logger.lines)).not.toContain(first);
    }
  }, 20_000);

  it('a batch announced with a token that another batch then met a 401 with leaves with the new token, not the refused one', async () => {
    const mock = createPushApiMock();
    const { fetch, seen } = capturingFetch(mock.fetch);
    const client = clientFor(mock, { fetch });
    const old = (await client.tokens.getToken()).accessToken;
    mock.revokeToken(old);
    let refused = () => {};
    const firstRefused = new Promise<void>((resolve) => {
      refused = resolve;
    });
    const report = await client.finance.publish(mock.appId, financeRecords(2), {
      batchSize: 1,
      concurrency: 2,
      adaptive: false,
      // Both batches hold the old token; batch 1 is still being announced when batch 0 meets its 401.
      onBatchSending: async (batch) => {
        if (batch.index === 1) await firstRefused;
      },
      onBatchSettled: (batch) => {
        if (batch.index === 0) refused();
      },
    });
    expect(report.recordsSent).toBe(2);
    const carried = seen.filter((request) => request.headers.authorization === `Bearer ${old}`);
    expect(carried).toHaveLength(1);
    expect(mock.state.requests.filter((request) => request.status === 401)).toHaveLength(1);
  });

  it('a batch refused with a token that ran out during its announcement, whose refresh then fails, is failed, not unknown', async () => {
    const mock = createPushApiMock({ tokenTtlSeconds: 1 });
    const client = clientFor(mock, { refreshMarginMs: 100, maxRetries: 1 });
    const settled: string[] = [];
    const error = await client.finance
      .publish(mock.appId, financeRecords(20), {
        batchSize: 10,
        concurrency: 1,
        onBatchSending: async (batch) => {
          if (batch.index !== 1) return;
          mock.faults.add({ match: { operation: 'token' }, status: 503, times: 10 });
          await new Promise((resolve) => setTimeout(resolve, 1200));
        },
        onBatchSettled: (batch) => {
          settled.push(`${batch.index} ${batch.status}`);
        },
      })
      .then(
        () => undefined,
        (reason: unknown) => reason,
      );
    expect(error).toBeInstanceOf(PublishStoppedError);
    expect((error as PublishStoppedError).report).toMatchObject({
      recordsSent: 10,
      recordsFailed: 10,
      recordsUnknown: 0,
    });
    expect(settled).toEqual(['0 sent', '1 failed']);
    expect(mock.state.recordCount(mock.appId)).toBe(10);
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
