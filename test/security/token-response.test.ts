/** A token response that is not a usable token is a TokenError, never a crash or a token used anyway. */

import { TokenError } from 'push-api-client';
import { createPushApiHandler } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';

const bodies: [string, Record<string, unknown> | string][] = [
  ['wrong token_type', { access_token: 'leak-me-not-1', token_type: 'mac', expires_in: 60 }],
  ['missing token_type', { access_token: 'leak-me-not-2', expires_in: 60 }],
  ['missing access_token', { token_type: 'Bearer', expires_in: 60 }],
  ['empty access_token', { access_token: '', token_type: 'Bearer', expires_in: 60 }],
  ['negative expires_in', { access_token: 'leak-me-not-3', token_type: 'Bearer', expires_in: -5 }],
  ['zero expires_in', { access_token: 'leak-me-not-4', token_type: 'Bearer', expires_in: 0 }],
  ['non-numeric expires_in', { access_token: 'leak-me-not-5', token_type: 'Bearer', expires_in: 'soon' }],
  ['an array', '[1,2]'],
  ['not JSON', '<html>login</html>'],
];

describe('token response validation', () => {
  it.each(bodies)('%s → TokenError, no data request sent, the token not quoted', async (_, body) => {
    const mock = createPushApiHandler();
    const client = clientFor(mock);
    mock.faults.add({ match: { operation: 'token' }, status: 200, body, times: 10 });
    const error = await client.finance
      .publishBatch(mock.appId, [
        { created: 1_700_000_000_000, amount: 1, currency: 'EUR', identifier: 'a', type: 'expense', vendor: 'v' },
      ])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenError);
    expect((error as TokenError).error).toBe('invalid_token_response');
    expect(mock.state.requests.filter((r) => r.operation === 'finance')).toHaveLength(0);
    // A malformed success is not retried: it would answer the same.
    expect(mock.state.requests.filter((r) => r.operation === 'token')).toHaveLength(1);
    expect(`${String(error)} ${JSON.stringify(error)}`).not.toMatch(/leak-me-not/);
  });
});
