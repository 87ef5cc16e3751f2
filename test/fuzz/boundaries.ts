/**
 * The boundary fuzz suite's properties: every place that reads text from outside (token answers,
 * data API answers, storage answers, environment values) ends, within a bounded time, with a result
 * or a typed error (a PushError subclass), never a crash: no RangeError, TypeError or unhandled
 * rejection, and every view of the error (String, JSON, inspect) works. The fast lane runs each
 * with a few cases, the end-to-end lane with many.
 */
import { inspect } from 'node:util';
import fc from 'fast-check';
import { ConfigurationError, ConnectionError, PushClient, PushError } from 'push-api-client';
import { expect } from 'vitest';
import {
  HOSTILE_APP_ID,
  type HostileRoute,
  type HostileService,
  type useHostileService,
} from '../support/hostile-service.js';
import { SAMPLE_RECORD } from '../support/records.js';
import { FUZZ_SEED } from './arbitraries.js';
import { deepAnswer, type HostileAnswer, hostileAnswer } from './hostile-answers.js';

/**
 * A hang detector, not a speed claim: every case here ends in milliseconds when the code is
 * right; a super-linear path (a backtracking regex, a walk over a deep answer) took seconds to
 * minutes on inputs like these.
 */
const CASE_DEADLINE_MS = 5_000;

/** Every view a caller or a logger takes of an error; none may throw. */
function viewAll(error: unknown): void {
  String(error);
  JSON.stringify(error);
  inspect(error, { depth: Infinity });
  const report = (error as { report?: unknown }).report;
  if (report !== undefined) JSON.stringify(report);
}

/**
 * An error built from an answer is judged by that answer: never a ConnectionError (the service did
 * answer; a crash while reading the answer used to surface as one), and its status is the answer's.
 * One exception, documented in docs/outcomes.md: a 421 answering a POST sent without fetch's copy
 * of its body, which fetch meets by sending the request again with no body left; the client never
 * sees the 421, and the failure stays ambiguous (a lost connection that may follow a stored body).
 */
function judgedByStatus(error: unknown, answer: HostileAnswer): void {
  expect(error).toBeInstanceOf(PushError);
  if (answer.status === 421 && error instanceof ConnectionError && error.requestMaybeSent) {
    expect(inspect(error)).toContain('UND_ERR_REQ_CONTENT_LENGTH_MISMATCH');
    return;
  }
  expect(error, inspect(error)).not.toBeInstanceOf(ConnectionError);
  const status = (error as { status?: unknown }).status;
  if (typeof status === 'number') expect(status).toBe(answer.status);
}

/**
 * Runs `call` against `answer`; it must resolve, or reject with a PushError judged by the answer's
 * status, within the deadline. Returns the outcome.
 */
async function settles(answer: HostileAnswer, call: () => Promise<unknown>): Promise<unknown> {
  const started = performance.now();
  const outcome = await call().then(
    (value) => value,
    (error: unknown) => {
      if (!(error instanceof PushError)) throw new Error(`not a PushError: ${inspect(error)}`, { cause: error });
      judgedByStatus(error, answer);
      viewAll(error);
      return error;
    },
  );
  expect(performance.now() - started).toBeLessThan(CASE_DEADLINE_MS);
  return outcome;
}

/** A hostile service that plays the current answer on `routes`, and behaves elsewhere. */
export async function answeringService(
  start: ReturnType<typeof useHostileService>,
  routes: readonly HostileRoute[],
): Promise<{ service: HostileService; play: (answer: HostileAnswer) => void }> {
  let current: HostileAnswer | undefined;
  const service = await start(({ route }, res) => {
    if (current === undefined || !routes.includes(route)) return false;
    res.writeHead(current.status, current.headers).end(current.status === 204 ? undefined : current.body);
    return true;
  });
  return {
    service,
    play: (answer) => {
      current = answer;
    },
  };
}

/** Token answers: `getToken` resolves or rejects with a PushError. */
export async function fuzzTokenAnswers(start: ReturnType<typeof useHostileService>, numRuns: number): Promise<void> {
  const { service, play } = await answeringService(start, ['token']);
  const client = service.client();
  await fc.assert(
    fc.asyncProperty(hostileAnswer, async (answer) => {
      play(answer);
      await settles(answer, () => client.tokens.getToken({ forceRefresh: true }));
    }),
    { numRuns, seed: FUZZ_SEED, examples: [[deepAnswer(401)], [deepAnswer(400)]] },
  );
}

/** Data API answers: upload addresses and finance batches end in a result or a PushError, counted. */
export async function fuzzApiAnswers(start: ReturnType<typeof useHostileService>, numRuns: number): Promise<void> {
  const { service, play } = await answeringService(start, ['upload-urls', 'finance']);
  const client = service.client();
  await fc.assert(
    fc.asyncProperty(hostileAnswer, fc.boolean(), async (answer, viaFinance) => {
      play(answer);
      if (!viaFinance) {
        await settles(answer, () => client.uploads.getUploadUrls(HOSTILE_APP_ID, ['a.csv']));
        return;
      }
      // A 429 waits for its Retry-After, without using up a retry, until the run's rate-limit
      // deadline (5 minutes by default): shortened so that a case ends in the deadline below.
      const outcome = await settles(answer, () =>
        client.finance.publish(HOSTILE_APP_ID, [SAMPLE_RECORD, SAMPLE_RECORD], { rateLimitDeadlineMs: 500 }),
      );
      if (outcome instanceof PushError) return;
      const report = outcome as {
        recordsSent: number;
        recordsFailed: number;
        recordsUnknown: number;
        batches: { error?: unknown }[];
      };
      // Every record is counted once, whatever the answer said.
      expect(report.recordsSent + report.recordsFailed + report.recordsUnknown).toBe(2);
      for (const batch of report.batches) if (batch.error !== undefined) judgedByStatus(batch.error, answer);
      viewAll(outcome);
    }),
    {
      numRuns,
      seed: FUZZ_SEED,
      examples: [
        [deepAnswer(404), true],
        [deepAnswer(429), false],
        [deepAnswer(200), true],
      ],
    },
  );
}

/** Storage answers to the PUT: each file is uploaded or failed with a PushError; the run never crashes. */
export async function fuzzStorageAnswers(start: ReturnType<typeof useHostileService>, numRuns: number): Promise<void> {
  const { service, play } = await answeringService(start, ['storage']);
  const client = service.client();
  await fc.assert(
    fc.asyncProperty(hostileAnswer, async (answer) => {
      play(answer);
      const outcome = await settles(answer, () =>
        client.uploads.upload(HOSTILE_APP_ID, [{ name: 'a.csv', data: 'x,y\n' }]),
      );
      if (outcome instanceof PushError) return;
      const report = outcome as { files: { status: string; error?: unknown }[] };
      expect(report.files).toHaveLength(1);
      for (const file of report.files) if (file.error !== undefined) judgedByStatus(file.error, answer);
      viewAll(outcome);
    }),
    { numRuns, seed: FUZZ_SEED, examples: [[deepAnswer(403)]] },
  );
}

/** Values an environment variable may hold: URLs with long runs of slashes, control characters, huge ones. */
const hostileEnvValue = fc.oneof(
  fc.constantFrom(
    `https://a.test${'/'.repeat(200_000)}x`,
    `http://127.0.0.1:1${'/'.repeat(200_000)}`,
    '/'.repeat(200_000),
    'https://a.test/%zz',
    'https://[::1',
    'javascript:alert(1)',
    '\u0000',
    ' ',
    '',
    'x'.repeat(200_000),
    'silly',
    'debug',
  ),
  fc.string({ unit: 'binary', maxLength: 60 }),
);

/** A variable that is usable most of the time, so that the checks after the first one are reached too. */
function envVar(usable: string): fc.Arbitrary<string> {
  return fc.oneof({ weight: 3, arbitrary: fc.constant(usable) }, { weight: 2, arbitrary: hostileEnvValue });
}

/** Usable values, with an auth URL and a scope base holding a long run of slashes: always tried first. */
const SLASHES_ENV = {
  PUSH_CLIENT_ID: 'client-1',
  PUSH_CLIENT_SECRET: 'secret-1234',
  PUSH_AUTH_URL: `https://auth.push.test${'/'.repeat(200_000)}token`,
  PUSH_BASE_URL: 'https://api.push.test',
  PUSH_SCOPE_BASE: `https://api.push.test${'/'.repeat(200_000)}scope`,
  PUSH_LOG: 'warn',
};

/** Environment values: the constructor gives a client or a ConfigurationError, in bounded time. */
export function fuzzEnvironment(numRuns: number): void {
  fc.assert(
    fc.property(
      fc.record({
        PUSH_CLIENT_ID: envVar('client-1'),
        PUSH_CLIENT_SECRET: envVar('secret-1234'),
        PUSH_AUTH_URL: envVar('http://127.0.0.1:1/auth/'),
        PUSH_BASE_URL: envVar('http://127.0.0.1:1/api'),
        PUSH_SCOPE_BASE: envVar('https://api.push.test/'),
        PUSH_LOG: envVar('warn'),
      }),
      fc.boolean(),
      (env, allowInsecureHttp) => {
        const started = performance.now();
        try {
          new PushClient({ env, allowInsecureHttp });
        } catch (error) {
          if (!(error instanceof ConfigurationError)) throw new Error(`not a ConfigurationError: ${inspect(error)}`);
          viewAll(error);
        }
        expect(performance.now() - started).toBeLessThan(CASE_DEADLINE_MS);
      },
    ),
    { numRuns, seed: FUZZ_SEED, examples: [[SLASHES_ENV, false]] },
  );
}
