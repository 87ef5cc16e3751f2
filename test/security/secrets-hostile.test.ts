/**
 * A service that echoes the client secret or the bearer token back, in any encoding a JSON or form
 * service uses: the secret must be in no view of the error the caller gets.
 */
import { inspect } from 'node:util';
import fc from 'fast-check';
import { PushApiError, type PushError, TokenError } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import {
  HOSTILE_APP_ID,
  HOSTILE_SECRET,
  HOSTILE_TOKEN,
  type HostileService,
  useHostileService,
} from '../support/hostile-service.js';
import { SAMPLE_RECORD } from '../support/records.js';

const start = useHostileService();

/** The ways one character can be written: as is, `\uXXXX`, `\/`, percent-encoded (either case), `+` for a space. */
function characterEncodings(char: string, inJson: boolean): string[] {
  const out = [char];
  if (inJson) {
    out.push(
      Array.from({ length: char.length }, (_, i) => `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''),
    );
    out.push(
      Array.from(
        { length: char.length },
        (_, i) => `\\u${char.charCodeAt(i).toString(16).padStart(4, '0').toUpperCase()}`,
      ).join(''),
    );
    if (char === '/') out.push('\\/');
    if (char === '"') out.push('\\"');
  }
  const percent = encodeURIComponent(char).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16)}`);
  out.push(percent === char ? `%${char.charCodeAt(0).toString(16).padStart(2, '0')}` : percent, percent.toLowerCase());
  if (char === ' ') out.push('+');
  // Inside a JSON string literal, a raw quote or backslash would end or break it.
  return inJson ? out.filter((form) => form !== '"' && form !== '\\') : out;
}

/** An arbitrary that writes `secret` with each character encoded its own way. */
function encoded(secret: string, inJson: boolean): fc.Arbitrary<string> {
  const chars = Array.from(secret);
  return fc
    .tuple(...chars.map((char) => fc.constantFrom(...characterEncodings(char, inJson))))
    .map((parts) => parts.join(''));
}

/** Every reading of a text a person or a tool might apply: JSON unescaping, percent and form decoding. */
function readings(text: string): string[] {
  const json = text
    .replace(/\\u([0-9a-fA-F]{4})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    .replace(/\\([/"\\])/g, '$1');
  const percent = (value: string) =>
    value.replace(/(%[0-9a-fA-F]{2})+/g, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run;
      }
    });
  return [
    text,
    json,
    percent(text),
    percent(json),
    percent(text.replace(/\+/g, ' ')),
    percent(json.replace(/\+/g, ' ')),
  ];
}

/** The views of an error: message, stack, inspect, JSON, its body, and the same for every cause. */
function views(error: unknown): string[] {
  const out: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth++) {
    out.push(String(current), inspect(current, { depth: Infinity, showHidden: true }), JSON.stringify(current) ?? '');
    if (current instanceof Error) out.push(current.message, current.stack ?? '');
    const body = (current as { body?: unknown }).body;
    if (body !== undefined) out.push(typeof body === 'string' ? body : JSON.stringify(body));
    current = (current as { cause?: unknown }).cause;
  }
  return out;
}

function leaks(error: unknown): string[] {
  const found = new Set<string>();
  for (const view of views(error)) {
    for (const reading of readings(view)) {
      if (reading.includes(HOSTILE_SECRET)) found.add('client secret');
      if (reading.includes(HOSTILE_TOKEN)) found.add('access token');
    }
  }
  return [...found];
}

/** One hostile answer: a status, and a body that is JSON (with the echo at some depth) or text. */
interface Answer {
  status: number;
  json: boolean;
  echo: string;
  headerEcho: string;
  shape: number;
}

function bodyOf(answer: Answer): string {
  if (!answer.json) return `upstream said: ${answer.echo} (end)`;
  // The echo is written into the JSON text as is, so its escapes reach the parser.
  const literal = `"x ${answer.echo} y"`;
  switch (answer.shape % 4) {
    case 0:
      return `{"code":"bad","message":${literal},"success":false}`;
    case 1:
      return `{"error":${literal},"error_description":${literal}}`;
    case 2:
      return `{"error":"invalid_request","error_description":${literal},"detail":{"list":[${literal}]}}`;
    default:
      return `{${literal}:{"nested":[1,{"deep":${literal}}]},"code":${literal}}`;
  }
}

function answers(secret: string, statuses: number[]): fc.Arbitrary<Answer> {
  return fc.record({
    status: fc.constantFrom(...statuses),
    json: fc.boolean(),
    echo: fc.boolean().chain((json) => encoded(secret, json)),
    headerEcho: encoded(secret, false),
    shape: fc.nat(3),
  });
}

/** A service whose `route` answers with the current hostile answer; the rest behaves. */
async function echoingService(route: 'token' | 'upload-urls' | 'finance') {
  let current: Answer | undefined;
  const service: HostileService = await start((request, res) => {
    if (request.route !== route || current === undefined) return false;
    res.writeHead(current.status, {
      'content-type': current.json ? 'application/json' : 'text/plain',
      'x-echo': current.headerEcho,
      // The request id travels into errors, reports and hook events: an echo there too.
      'x-request-id': `id-${current.headerEcho}`,
    });
    res.end(bodyOf(current));
    return true;
  });
  return {
    service,
    set: (answer: Answer) => {
      current = answer;
    },
  };
}

async function failureOf(run: () => Promise<unknown>): Promise<PushError> {
  try {
    const result = (await run()) as { batches?: { error?: PushError }[] } | undefined;
    const error = result?.batches?.[0]?.error;
    if (error === undefined) throw new Error('expected a failure');
    return error;
  } catch (error) {
    return error as PushError;
  }
}

describe('an echoed secret is in no view of the error', () => {
  it('the token endpoint echoing the secret with \\u escapes (any character) gives a clean TokenError', async () => {
    const escaped = Array.from(HOSTILE_SECRET, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    const { service, set } = await echoingService('token');
    set({ status: 400, json: true, echo: escaped, headerEcho: 'x', shape: 1 });
    const error = await failureOf(() => service.client().tokens.getToken());
    expect(error).toBeInstanceOf(TokenError);
    expect((error as TokenError).error).toContain('[redacted]');
    expect(leaks(error)).toEqual([]);
  });

  it('a service echoing the bearer token JSON-escaped (\\/) gives a clean PushApiError', async () => {
    const { service, set } = await echoingService('upload-urls');
    set({
      status: 422,
      json: true,
      echo: JSON.stringify(HOSTILE_TOKEN).slice(1, -1).replace(/\//g, '\\/'),
      headerEcho: 'x',
      shape: 0,
    });
    const error = await failureOf(() => service.client().uploads.getUploadUrls(HOSTILE_APP_ID, ['a.csv']));
    expect(error).toBeInstanceOf(PushApiError);
    expect(error.message).toBe('422 x [redacted] y');
    expect(leaks(error)).toEqual([]);
  });

  it('property: random token-endpoint answers embedding the secret in any encoding leak nothing', async () => {
    const { service, set } = await echoingService('token');
    const client = service.client();
    await fc.assert(
      fc.asyncProperty(answers(HOSTILE_SECRET, [200, 400, 401, 403, 500, 503]), async (answer) => {
        set(answer);
        const error = await failureOf(() => client.tokens.getToken({ forceRefresh: true }));
        expect(error).toBeInstanceOf(TokenError);
        expect(leaks(error)).toEqual([]);
      }),
      { numRuns: 60 },
    );
  });

  it('property: random API answers embedding the token in any encoding leak nothing (upload addresses and finance)', async () => {
    const upload = await echoingService('upload-urls');
    const finance = await echoingService('finance');
    const uploadClient = upload.service.client();
    const financeClient = finance.service.client();
    await fc.assert(
      fc.asyncProperty(
        answers(HOSTILE_TOKEN, [200, 400, 403, 404, 409, 422, 500, 502]),
        fc.boolean(),
        async (answer, viaFinance) => {
          finance.set(answer);
          upload.set(answer);
          const error = await failureOf(() =>
            viaFinance
              ? financeClient.finance.publish(HOSTILE_APP_ID, [SAMPLE_RECORD])
              : uploadClient.uploads.getUploadUrls(HOSTILE_APP_ID, ['a.csv']),
          );
          expect(leaks(error)).toEqual([]);
        },
      ),
      { numRuns: 80 },
    );
  });
});
