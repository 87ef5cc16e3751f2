/**
 * A service that echoes what it received in base64 (a debugging gateway quoting the request body,
 * an error naming the `Authorization` it refused): base64 is read back by anyone who sees it, so
 * the client secret and the bearer token are scrubbed in it too, wherever they sat in the text that
 * was encoded (each of the three alignments), in either alphabet (`+/` and the URL-safe `-_`).
 */
import { inspect } from 'node:util';
import type { PushApiError, TokenError } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { base64Forms } from '../../src/internal/text.js';
import { HOSTILE_APP_ID, HOSTILE_SECRET, HOSTILE_TOKEN, useHostileService } from '../support/hostile-service.js';
import { SAMPLE_RECORD } from '../support/records.js';

const start = useHostileService();

function views(error: unknown): string {
  return [inspect(error, { depth: 10, showHidden: true }), JSON.stringify(error), String(error)].join('\n');
}

/**
 * The secrets a text gives away when its base64 runs are decoded, at every alignment, in either
 * alphabet: read as a person with a decoder would, independently of how the SDK searches.
 */
function decodedLeaks(text: string, secrets: readonly string[]): string[] {
  const found = new Set<string>();
  for (const run of text.match(/[A-Za-z0-9+/\-_]{8,}/g) ?? []) {
    const standard = run.replaceAll('-', '+').replaceAll('_', '/');
    for (let skip = 0; skip < 4; skip++) {
      const decoded = Buffer.from(standard.slice(skip), 'base64').toString('latin1');
      for (const secret of secrets) {
        const bytes = Buffer.from(secret, 'utf8').toString('latin1');
        // Most of the secret is enough to give it away.
        if (decoded.includes(bytes.slice(0, Math.ceil(bytes.length * 0.75)))) found.add(secret);
      }
    }
  }
  return [...found];
}

const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
const base64url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
const formEncoded = (text: string) => new URLSearchParams({ v: text }).toString().slice(2);

describe('the client secret echoed in base64 by the token endpoint', () => {
  it.each([
    ['the secret alone', () => base64(HOSTILE_SECRET)],
    ['the secret alone, URL-safe alphabet', () => base64url(HOSTILE_SECRET)],
    ['the request body as received, one byte in', (body: string) => base64(`x${body}`)],
    ['the request body as received, two bytes in', (body: string) => base64(`xy${body}`)],
    ['the request body as received, three bytes in', (body: string) => base64url(`xyz${body}`)],
  ])('%s: in no view of the TokenError', async (_, echo) => {
    const service = await start(({ route, body }, res) => {
      if (route !== 'token') return false;
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'invalid_client', error_description: `received ${echo(body)}` }));
      return true;
    });
    const error = (await service
      .client()
      .tokens.getToken()
      .catch((caught: unknown) => caught)) as TokenError;
    expect(error.name).toBe('TokenError');
    const seen = views(error);
    // The echo reached the error: the test would pass without any scrubbing otherwise.
    expect(seen).toContain('received ');
    expect(decodedLeaks(seen, [HOSTILE_SECRET, formEncoded(HOSTILE_SECRET)])).toEqual([]);
  });
});

describe('the bearer token echoed in base64 by the data API', () => {
  it.each([
    ['the token alone', () => base64(HOSTILE_TOKEN)],
    ['the Authorization header as received', (auth: string) => base64(`Authorization: ${auth}`)],
    ['the header value, URL-safe alphabet', (auth: string) => base64url(auth)],
  ])('%s: in no view of the finance error or the report', async (_, echo) => {
    const service = await start(({ route, authorization }, res) => {
      if (route !== 'finance') return false;
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ code: '400', message: `refused ${echo(authorization ?? '')}`, success: false }));
      return true;
    });
    const report = await service.client().finance.publish(HOSTILE_APP_ID, [SAMPLE_RECORD]);
    const error = report.batches[0]?.error as PushApiError;
    expect(error.status).toBe(400);
    const seen = `${views(error)}\n${JSON.stringify(report)}`;
    expect(seen).toContain('refused ');
    expect(decodedLeaks(seen, [HOSTILE_TOKEN])).toEqual([]);
  });
});

describe('the base64 forms of a secret, computed once per secret', () => {
  it('hands each caller forms of its own text, which no caller can change for the next', () => {
    const first = `first-${'a'.repeat(40)}`;
    const second = `second-${'b'.repeat(40)}`;
    const forms = base64Forms(first);
    const expected = [...forms];
    expect(forms.some((form) => base64(`x${first}`).includes(form))).toBe(true);
    // One array serves every attempt with this token: a caller adding to it must not change it.
    expect(() => (forms as string[]).push('plain text')).toThrow(TypeError);
    expect(base64Forms(first)).toEqual(expected);
    const other = base64Forms(second);
    expect(other.some((form) => expected.includes(form))).toBe(false);
    expect(other.some((form) => base64(`xy${second}`).includes(form))).toBe(true);
    expect(base64Forms(first)).toEqual(expected);
    // Past the documented limit: none, and that answer cannot be changed either.
    const none = base64Forms('c'.repeat(12 * 1024 + 1));
    expect(none).toEqual([]);
    expect(() => (none as string[]).push('plain text')).toThrow(TypeError);
    expect(base64Forms('d'.repeat(12 * 1024 + 1))).toEqual([]);
  });
});
