/**
 * Hostile answers for the boundary fuzz suite: any status, bodies that are JSON of the wrong shape,
 * nested tens of thousands deep, long, broken UTF-8 or XML, and odd header values. Used by the fast
 * lane (few runs) and the end-to-end lane (many).
 */
import fc from 'fast-check';

/** One answer a hostile service plays. */
export interface HostileAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** Text that a header value may carry (Latin-1 without control characters: node refuses to send others). */
const headerValue = fc.oneof(
  fc.constantFrom('0', '1', '-1', '1e400', 'Wed, 21 Oct 2015 07:28:00 GMT', 'soon', '', '9'.repeat(400)),
  fc.string({
    unit: fc
      .integer({ min: 0x20, max: 0xff })
      .filter((code) => code !== 0x7f)
      .map((code) => String.fromCharCode(code)),
    maxLength: 200,
  }),
);

/** Arrays or objects nested `depth` deep, with `inner` at the bottom. */
function nested(depth: number, inner: string, kind: 'array' | 'object'): string {
  return kind === 'array'
    ? `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`
    : `${'{"a":'.repeat(depth)}${inner}${'}'.repeat(depth)}`;
}

const anyJson = fc.jsonValue({ maxDepth: 4 });
const oddField = fc.oneof(
  anyJson,
  fc.constantFrom(null, true, 0, -1, 1e300, '', ' ', 'Bearer', 'bearer', 'invalid_client', 'expired', '\u0000'),
);

/** JSON objects with the fields a client reads (token, error, success), each of any type. */
const fieldsObject = fc
  .dictionary(
    fc.constantFrom(
      'access_token',
      'token_type',
      'expires_in',
      'scope',
      'error',
      'error_description',
      'success',
      'code',
      'message',
      'a.csv',
      '__proto__',
      'constructor',
    ),
    oddField,
    { maxKeys: 8 },
  )
  .map((fields) => JSON.stringify(fields));

/** A body: shapes a client expects with wrong types, deep nesting, long text, XML, bytes. */
const body: fc.Arbitrary<Buffer> = fc
  .oneof(
    fieldsObject,
    anyJson.map((value) => JSON.stringify(value)),
    fc
      .tuple(
        fc.integer({ min: 1_000, max: 40_000 }),
        fc.constantFrom('array', 'object') as fc.Arbitrary<'array' | 'object'>,
      )
      .map(([depth, kind]) => `{"error":"invalid_client","code":"x","detail":${nested(depth, '1', kind)}}`),
    fc.integer({ min: 1_000, max: 40_000 }).map((depth) => nested(depth, '"x"', 'array')),
    fc
      .tuple(fc.string({ maxLength: 40 }), fc.string({ maxLength: 40 }))
      .map(
        ([code, message]) => `<?xml version="1.0"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`,
      ),
    fc.constantFrom('<Code><Code><Code>', '&amp;&lt;'.repeat(2_000), '%'.repeat(5_000), '\\'.repeat(5_000)),
    fc.integer({ min: 1, max: 200 }).map((kib) => 'x'.repeat(kib * 1024)),
    fc.string({ unit: 'binary', maxLength: 200 }),
  )
  .map((text) => Buffer.from(text))
  .chain((bytes) =>
    fc.oneof(
      fc.constant(bytes),
      // Broken UTF-8 somewhere in it.
      fc
        .nat(bytes.length)
        .map((at) => Buffer.concat([bytes.subarray(0, at), Buffer.from([0xc3, 0x28, 0xff]), bytes.subarray(at)])),
    ),
  );

/** Any answer: any status from 200 to 599 (the common ones more often), odd headers, any body. */
export const hostileAnswer: fc.Arbitrary<HostileAnswer> = fc.record({
  status: fc.oneof(
    fc.constantFrom(200, 201, 204, 400, 401, 403, 404, 409, 422, 429, 500, 502, 503),
    fc.integer({ min: 200, max: 599 }).filter((status) => status < 300 || status >= 400),
  ),
  headers: fc.record(
    {
      'content-type': fc.constantFrom('application/json', 'text/plain', 'application/xml', 'text/html; charset=latin1'),
      'retry-after': headerValue,
      'x-request-id': headerValue,
    },
    { requiredKeys: ['content-type'] },
  ),
  body,
});

/** An error answer nesting 30,000 arrays deep (under the 64 KiB error cap): always tried first. */
export function deepAnswer(status: number): HostileAnswer {
  return {
    status,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(`{"error":"invalid_client","code":"x","detail":${nested(30_000, '1', 'array')}}`),
  };
}
