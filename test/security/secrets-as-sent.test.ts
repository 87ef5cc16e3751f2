/**
 * Secrets scrubbed in the form a service sees them: a token endpoint that ends its token with
 * whitespace (which fetch drops from the header), and a service that writes a secret into a
 * response header's name, which a redaction marker cannot stand in for.
 */
import type { ServerResponse } from 'node:http';
import { inspect } from 'node:util';
import { PermissionDeniedError, PublishStoppedError, type PushError, ServerError, TokenError } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { trimHttpWhitespace } from '../../src/internal/text.js';
import { HOSTILE_APP_ID, useHostileService } from '../support/hostile-service.js';
import { SAMPLE_RECORD } from '../support/records.js';

const start = useHostileService();

/** An opaque token of lower-case hex, as many services issue: a header name can hold it whole. */
const LOWER_TOKEN = '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08';

/** Every view of an error a log or a report may show. */
function views(error: unknown): string {
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  return [
    String(error),
    inspect(error, { depth: Infinity, showHidden: true }),
    JSON.stringify(error),
    inspect(cause),
  ].join('\n');
}

/** A service issuing `token`, whose finance route `answer` serves with the token it received. */
async function issuing(token: string, answer: (received: string, res: ServerResponse) => void) {
  return start((request, res) => {
    if (request.route === 'token') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: 3600 }));
      return true;
    }
    if (request.route !== 'finance') return false;
    answer((request.authorization ?? '').replace(/^Bearer /, ''), res);
    return true;
  });
}

/** A service issuing `token` whose finance answers are a `status` that echoes the token as received, in its body and headers. */
function echoing(token: string, status: number, headers: (received: string) => Record<string, string>) {
  return issuing(token, (received, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers(received) });
    res.end(JSON.stringify({ code: String(status), message: `token ${received} refused`, success: false }));
  });
}

describe('a token issued with surrounding whitespace', () => {
  for (const [name, padded] of [
    ['a newline', `${LOWER_TOKEN}\n`],
    ['CR LF', `${LOWER_TOKEN}\r\n`],
    ['a tab', `${LOWER_TOKEN}\t`],
    ['a space, before and after', ` ${LOWER_TOKEN} `],
  ] as const) {
    it(`is sent and scrubbed as fetch sends it (${name})`, async () => {
      const service = await echoing(padded, 500, (received) => ({ 'x-echo': received }));
      const client = service.client({ maxRetries: 0 });
      expect((await client.tokens.getToken()).accessToken).toBe(LOWER_TOKEN);
      const report = await client.finance.publish(HOSTILE_APP_ID, [SAMPLE_RECORD]);
      expect(service.on('finance')[0]?.authorization).toBe(`Bearer ${LOWER_TOKEN}`);
      const error = report.batches[0]?.error;
      expect(error).toBeInstanceOf(ServerError);
      expect(error?.message).toContain('[redacted]');
      expect(views(error)).not.toContain(LOWER_TOKEN);
      expect(JSON.stringify(report)).not.toContain(LOWER_TOKEN);
    });
  }
});

describe('a token built to make trimming slow', () => {
  it('is trimmed in one pass, from the token endpoint and from a token store', async () => {
    // `[ \t]+$` re-reads an inner run of spaces from each of its characters: seconds per read here.
    const token = `a${' '.repeat(60_000)}b`;
    // From the endpoint: trimmed, then refused (spaces are not RFC 6750 token characters).
    const refusing = await echoing(`${token}\n`, 500, () => ({}));
    const refused = await refusing
      .client({ maxRetries: 0 })
      .tokens.getToken()
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TokenError);
    expect(String((refused as TokenError).message)).toContain('RFC 6750');
    // From a store, which the client trusts: sent as it is, and scrubbed in the form sent.
    const service = await echoing(LOWER_TOKEN, 500, () => ({}));
    const store = {
      get: () => ({
        accessToken: `${token}\n`,
        tokenType: 'Bearer',
        expiresAt: new Date(Date.now() + 3_600_000),
        scopes: [],
      }),
      set: () => {},
    };
    const client = service.client({ maxRetries: 0, tokenStore: store });
    const report = await client.finance.publish(HOSTILE_APP_ID, [SAMPLE_RECORD]);
    expect(service.on('finance')[0]?.authorization).toBe(`Bearer ${token}`);
    expect(report.batches[0]?.error?.message).toContain('[redacted]');
    expect(trimHttpWhitespace(`\t x${' '.repeat(1_000_000)}y \r\n`)).toBe(`x${' '.repeat(1_000_000)}y`);
    // A bound, not a measure: one pass takes milliseconds here, the backtracking regex 4 s per read
    // of the token (its parse, then every attempt), past this test's limit on any machine.
  }, 3_000);
});

describe('a token a Bearer header cannot carry as it is', () => {
  it('is refused with a clear reason, and is in no view of the error', async () => {
    // fetch would send U+00A0 as the single byte 0xA0, which an echo percent-encodes as %A0: no UTF-8 reading finds it.
    for (const token of [
      `${LOWER_TOKEN}\u00a0`,
      `${LOWER_TOKEN.slice(0, 20)}\u00a0${LOWER_TOKEN.slice(20)}`,
      `${LOWER_TOKEN}é`,
    ]) {
      const service = await echoing(token, 500, () => ({}));
      const error = await service
        .client({ maxRetries: 0 })
        .tokens.getToken()
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(TokenError);
      expect((error as TokenError).error).toBe('invalid_token_response');
      expect(views(error)).not.toContain(LOWER_TOKEN.slice(0, 20));
    }
  });
});

describe('a secret in a response header name', () => {
  it('is left out of a batch error and of the error that stops a run', async () => {
    for (const status of [500, 403]) {
      const service = await echoing(LOWER_TOKEN, status, (received) => ({
        [received]: '1',
        [`x-token-${received}`]: '1',
        'x-kept': 'yes',
      }));
      const client = service.client({ maxRetries: 0 });
      let error: PushError | undefined;
      let report: unknown;
      let thrown: unknown;
      try {
        report = await client.finance.publish(HOSTILE_APP_ID, [SAMPLE_RECORD]);
        error = (report as { batches: { error?: PushError }[] }).batches[0]?.error;
      } catch (caught) {
        // A 403 stops the run: the error that stopped it is the cause.
        expect(caught).toBeInstanceOf(PublishStoppedError);
        thrown = caught;
        error = (caught as PublishStoppedError).cause as PushError;
        report = (caught as PublishStoppedError).report;
      }
      expect(error).toBeInstanceOf(status === 403 ? PermissionDeniedError : ServerError);
      const headers = (error as { headers?: Record<string, string> }).headers ?? {};
      expect(headers['x-kept'], String(status)).toBe('yes');
      expect(views(error), String(status)).not.toContain(LOWER_TOKEN);
      expect(views(thrown), String(status)).not.toContain(LOWER_TOKEN);
      expect(JSON.stringify(report), String(status)).not.toContain(LOWER_TOKEN);
    }
  });

  it('is left out whatever its case, and so is a name holding an escape', async () => {
    // The Headers class lower-cases names: a token with capitals arrives lower-cased.
    const token = 'at-Token-AbC123xyz';
    const service = await issuing(token, (_received, res) => {
      res.writeHead(500, {
        'content-type': 'application/json',
        [`x-${token}`]: '1',
        'x-at-token-%41bc123xyz': '1',
        'x-kept': 'yes',
      });
      res.end('{"success":false}');
    });
    const report = await service.client({ maxRetries: 0 }).finance.publish(HOSTILE_APP_ID, [SAMPLE_RECORD]);
    const headers = (report.batches[0]?.error as { headers?: Record<string, string> } | undefined)?.headers ?? {};
    expect(Object.keys(headers)).toContain('x-kept');
    expect(Object.keys(headers).filter((name) => name.startsWith('x-at'))).toEqual([]);
    expect(JSON.stringify(report).toLowerCase()).not.toContain(token.toLowerCase());
  });

  it("is left out of a token answer's headers from withResponse()", async () => {
    const secret = 'lowercase-secret-0123456789';
    const service = await start((request, res) => {
      if (request.route !== 'token') return false;
      res.writeHead(200, { 'content-type': 'application/json', [`x-debug-${secret}`]: '1', 'x-kept': 'yes' });
      res.end(JSON.stringify({ access_token: LOWER_TOKEN, token_type: 'Bearer', expires_in: 3600 }));
      return true;
    });
    const client = service.client({ clientSecret: secret });
    const { response } = await client.tokens.getToken().withResponse();
    const names = [...(response?.headers.keys() ?? [])];
    expect(names).toContain('x-kept');
    expect(names.join(' ')).not.toContain(secret);
  });

  it('is left out of a success answer that a hook or the report sees', async () => {
    const service = await issuing(LOWER_TOKEN, (_received, res) => {
      // `success` missing: the batch's outcome is unknown, and its error quotes the answer's headers.
      res.writeHead(200, { 'content-type': 'application/json', [`x-${LOWER_TOKEN}`]: '1', 'x-kept': 'yes' });
      res.end('{"stored":true}');
    });
    const report = await service.client({ maxRetries: 0 }).finance.publish(HOSTILE_APP_ID, [SAMPLE_RECORD]);
    const error = report.batches[0]?.error;
    expect((error as { headers?: Record<string, string> }).headers?.['x-kept']).toBe('yes');
    expect(views(error)).not.toContain(LOWER_TOKEN);
  });
});
