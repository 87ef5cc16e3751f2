import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BatchStatus, PublishReport } from 'push-api-client';
import {
  BadRequestError,
  ConnectionError,
  PushApiError,
  PushError,
  RedirectError,
  ResponseTooLargeError,
  ServerError,
  TimeoutError,
  UnexpectedResponseError,
  UnprocessableEntityError,
} from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { drainedOrClosed, HOSTILE_APP_ID, type HostileRoute, useHostileService } from '../support/hostile-service.js';
import { closedPort } from '../support/loopback-server.js';
import { SAMPLE_RECORD } from '../support/records.js';

const start = useHostileService();

/** Plays the row's answer on the `hit`-th request of the route; false lets the well-behaved service answer. */
type Play = (res: ServerResponse, hit: number, req: IncomingMessage, route: HostileRoute) => boolean;

type ErrorClass = abstract new (...args: never[]) => PushError;

interface Row {
  /** The three cells of the doc's row, verbatim. */
  doc: [answer: string, idempotent: string, finance: string];
  play: Play;
  /** What the GET for upload addresses ends with, and how many requests reached the service; undefined for "—". */
  idempotent?: { result: 'resolves' | ErrorClass; requests?: number };
  finance: { status: BatchStatus; error?: ErrorClass; requests?: number };
  /** Plays against a port where nothing listens. */
  refused?: boolean;
  /** @default 3000 */
  timeoutMs?: number;
}

const once1 =
  (answer: (res: ServerResponse, req: IncomingMessage, route: HostileRoute) => void): Play =>
  (res, hit, req, route) => {
    if (hit > 1) return false;
    answer(res, req, route);
    return true;
  };

const json = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) =>
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(body);

/** Sends `bytes` of filler under a 200, stopping when the client hangs up. */
async function huge(res: ServerResponse, bytes: number): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(bytes) });
  const chunk = Buffer.alloc(64 * 1024, 'a');
  for (let sent = 0; sent < bytes && !res.destroyed; sent += chunk.length) {
    if (!res.write(chunk)) await drainedOrClosed(res);
  }
  res.destroy();
}

const rows: Row[] = [
  {
    doc: ['1xx (such as 103 Early Hints), then a final answer', 'the final answer decides', 'the final answer decides'],
    play: (res) => {
      res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' });
      return false;
    },
    idempotent: { result: 'resolves', requests: 1 },
    finance: { status: 'sent', requests: 1 },
  },
  {
    doc: [
      'a `100 Continue` nobody asked for, then a final answer',
      "retried: Node's fetch (undici) takes it for a broken answer",
      '`unknown` (`ConnectionError`), not re-sent',
    ],
    play: (res, hit) => {
      if (hit === 1) res.writeContinue();
      return false;
    },
    idempotent: { result: 'resolves', requests: 2 },
    finance: { status: 'unknown', error: ConnectionError, requests: 1 },
  },
  {
    doc: ['2xx with the expected body', 'resolves', '`sent`'],
    play: () => false,
    idempotent: { result: 'resolves', requests: 1 },
    finance: { status: 'sent', requests: 1 },
  },
  {
    doc: [
      '2xx whose body is not what the spec says (not JSON, not an address map, no `"success": true`)',
      '`PushError`, not retried',
      '`unknown` (`UnexpectedResponseError`), not re-sent',
    ],
    play: (res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html>maintenance</html>');
      return true;
    },
    idempotent: { result: PushError, requests: 1 },
    finance: { status: 'unknown', error: UnexpectedResponseError, requests: 1 },
  },
  {
    doc: ['2xx with `"success": false`', '—', '`failed`'],
    play: (res) => {
      json(res, 200, '{"success":false}');
      return true;
    },
    finance: { status: 'failed', error: UnexpectedResponseError, requests: 1 },
  },
  {
    doc: [
      '2xx whose body passes its cap (token and finance 64 KiB, upload addresses 8 MiB)',
      '`ResponseTooLargeError`, connection dropped, not retried',
      '`unknown` (`ResponseTooLargeError`), not re-sent',
    ],
    play: (res) => {
      void huge(res, 9 * 1024 * 1024);
      return true;
    },
    idempotent: { result: ResponseTooLargeError, requests: 1 },
    finance: { status: 'unknown', error: ResponseTooLargeError, requests: 1 },
  },
  {
    doc: [
      '3xx with a `Location`',
      'followed by hand (Authorization and bodies stay on the origin, https per hop, a streamed body is never replayed)',
      '`unknown` (`RedirectError`), never followed, not re-sent',
    ],
    play: once1((res, req) => res.writeHead(302, { location: `${req.url}&moved=1` }).end()),
    idempotent: { result: 'resolves', requests: 2 },
    finance: { status: 'unknown', error: RedirectError, requests: 1 },
  },
  {
    doc: ['408', 'retried', '`failed`, not re-sent'],
    play: once1((res) => json(res, 408, '{"code":"timeout","message":"slow","success":false}')),
    idempotent: { result: 'resolves', requests: 2 },
    finance: { status: 'failed', error: PushApiError, requests: 1 },
  },
  {
    doc: ['429', 'retried after `Retry-After`', 'waits for `Retry-After` and goes again; `sent` once accepted'],
    play: once1((res) =>
      json(res, 429, '{"code":"rate","message":"slow down","success":false}', { 'retry-after': '0' }),
    ),
    idempotent: { result: 'resolves', requests: 2 },
    finance: { status: 'sent', requests: 2 },
  },
  {
    doc: ['other 4xx (400, 403, 404, 409, 422)', '`PushApiError` subclass, not retried', '`failed`, not re-sent'],
    play: (res) => {
      json(res, 422, '{"code":"invalid","message":"bad payload","success":false}');
      return true;
    },
    idempotent: { result: UnprocessableEntityError, requests: 1 },
    finance: { status: 'failed', error: UnprocessableEntityError, requests: 1 },
  },
  {
    doc: ['503', 'retried', 'retried; `sent` once accepted'],
    play: once1((res) => json(res, 503, '{"code":"busy","message":"later","success":false}', { 'retry-after': '0' })),
    idempotent: { result: 'resolves', requests: 2 },
    finance: { status: 'sent', requests: 2 },
  },
  {
    doc: ['500, 502, 504 and any other 5xx', 'retried', '`unknown` (`ServerError`), not re-sent'],
    play: once1((res) =>
      json(res, 502, '{"code":"gateway","message":"bad gateway","success":false}', { 'retry-after': '0' }),
    ),
    idempotent: { result: 'resolves', requests: 2 },
    finance: { status: 'unknown', error: ServerError, requests: 1 },
  },
  {
    doc: [
      'connection reset or closed after the request was written, no answer',
      'retried',
      '`unknown` (`ConnectionError`), not re-sent',
    ],
    play: once1((_res, req) => req.socket.destroy()),
    idempotent: { result: 'resolves', requests: 2 },
    finance: { status: 'unknown', error: ConnectionError, requests: 1 },
  },
  {
    doc: ['no answer within `timeoutMs`', 'retried', '`unknown` (`TimeoutError`), not re-sent'],
    // Never answers; the connection is closed when the test ends.
    play: once1(() => undefined),
    timeoutMs: 400,
    idempotent: { result: 'resolves', requests: 2 },
    finance: { status: 'unknown', error: TimeoutError, requests: 1 },
  },
  {
    doc: [
      'truncated body (the connection closes before `Content-Length` bytes)',
      'retried',
      '`unknown` (`ConnectionError`), not re-sent',
    ],
    play: once1((res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"suc');
      setTimeout(() => res.destroy(), 20);
    }),
    idempotent: { result: 'resolves', requests: 2 },
    finance: { status: 'unknown', error: ConnectionError, requests: 1 },
  },
  {
    doc: [
      '4xx or 5xx whose body never finishes (it stalls past `timeoutMs`, or the connection drops mid-body)',
      'the status decides, as in the rows above',
      'the status decides, as in the rows above',
    ],
    play: (res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.write('{"code":"400","message":"bad');
      return true;
    },
    timeoutMs: 400,
    idempotent: { result: BadRequestError, requests: 1 },
    finance: { status: 'failed', error: BadRequestError, requests: 1 },
  },
  {
    doc: ['connection refused (nothing was written)', 'retried, then `ConnectionError`', 'retried, then `failed`'],
    play: () => false,
    refused: true,
    idempotent: { result: ConnectionError },
    finance: { status: 'failed', error: ConnectionError },
  },
];

async function setUp(row: Row, route: HostileRoute) {
  const service = await start(({ route: at, hit }, res, req) => at === route && row.play(res, hit, req, at));
  const baseUrl = row.refused ? `http://127.0.0.1:${await closedPort()}` : service.url;
  // Each row is about which class an answer falls in, not how long the wait is: no backoff.
  const client = service.client({
    baseUrl,
    maxRetries: 1,
    timeoutMs: row.timeoutMs ?? 3000,
    backoff: { initialDelayMs: 0, maxDelayMs: 0 },
    maxRetryAfterMs: 0,
  });
  return { service, client };
}

describe('every answer, against a real server', () => {
  for (const row of rows) {
    const [answer, idempotentRule, financeRule] = row.doc;
    const expected = row.idempotent;
    if (expected !== undefined) {
      it(`${answer}: idempotent request: ${idempotentRule}`, async () => {
        const { service, client } = await setUp(row, 'upload-urls');
        const outcome = await client.uploads.getUploadUrls(HOSTILE_APP_ID, ['a.csv']).then(
          () => 'resolves' as const,
          (error: unknown) => error,
        );
        if (expected.result === 'resolves') expect(outcome).toBe('resolves');
        else expect(outcome).toBeInstanceOf(expected.result);
        if (expected.requests !== undefined) expect(service.on('upload-urls')).toHaveLength(expected.requests);
      });
    }
    it(`${answer}: finance POST: ${financeRule}`, async () => {
      const { service, client } = await setUp(row, 'finance');
      // A run stopped by an error (every batch would meet it) rejects with the report on the error.
      const report = await client.finance
        .publish(HOSTILE_APP_ID, [SAMPLE_RECORD])
        .catch((error: { report?: PublishReport }) => error.report);
      const batch = report?.batches[0];
      expect(batch?.status).toBe(row.finance.status);
      if (row.finance.error !== undefined) expect(batch?.error).toBeInstanceOf(row.finance.error);
      if (row.finance.requests !== undefined) expect(service.on('finance')).toHaveLength(row.finance.requests);
    });
  }
});

describe('the table in docs/outcomes.md', () => {
  it('has exactly the rows tested here, in the same words', () => {
    const doc = readFileSync(new URL('../../docs/outcomes.md', import.meta.url), 'utf8');
    const section = doc.split('## Every answer, and what it means')[1]?.split('\n## ')[0] ?? '';
    const tableRows = section
      .split('\n')
      .filter((line) => line.startsWith('| ') && !line.startsWith('| answer |'))
      .map((line) =>
        line
          .slice(2, -2)
          .split(' | ')
          .map((cell) => cell.trim()),
      );
    expect(tableRows).toEqual(rows.map((row) => row.doc));
  });
});
