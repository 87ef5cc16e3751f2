/**
 * The default token store holds one token per scope set, and `client.request` takes scopes per
 * call: a caller passing its users' scopes must not fill the process with tokens.
 */
import { MemoryTokenStore, PushClient } from 'push-api-client';
import { describe, expect, it } from 'vitest';

const MAX = 1024;

function token(key: string, expiresAt: number) {
  return { accessToken: `token-${key}`, tokenType: 'Bearer', expiresAt: new Date(expiresAt), scopes: [key] };
}

function sizeOf(store: MemoryTokenStore): number {
  return (store.toJSON() as { size: number }).size;
}

describe('MemoryTokenStore', () => {
  it(`holds at most ${MAX} tokens, dropping the longest held first`, () => {
    let now = 0;
    const store = new MemoryTokenStore({ now: () => now });
    for (let i = 0; i < MAX * 3; i++) store.set(`scope-${i}`, token(`scope-${i}`, 3_600_000));
    expect(sizeOf(store)).toBe(MAX);
    expect(store.get('scope-0')).toBeUndefined();
    expect(store.get(`scope-${MAX * 3 - 1}`)?.accessToken).toBe(`token-scope-${MAX * 3 - 1}`);
    now = 1;
    expect(store.get(`scope-${MAX * 2}`)?.accessToken).toBe(`token-scope-${MAX * 2}`);
  });

  it('drops expired tokens before live ones when full, and a token set again counts as new', () => {
    let now = 0;
    const store = new MemoryTokenStore({ now: () => now });
    store.set('client', token('client', 10_000_000));
    for (let i = 1; i < MAX; i++) store.set(`short-${i}`, token(`short-${i}`, 1_000));
    now = 2_000;
    store.set('new', token('new', 10_000_000));
    // The expired ones made room: the client's own token, the oldest, stays.
    expect(store.get('client')?.accessToken).toBe('token-client');
    expect(sizeOf(store)).toBe(2);
  });
});

describe('the token manager behind it', () => {
  it(`keeps at most ${MAX} scope sets in hand too: the oldest is asked for again, the newest is not`, async () => {
    let requests = 0;
    // A token endpoint that grants whatever scope it is asked for.
    const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const request = new Request(input, init);
      requests++;
      const scope = new URLSearchParams(await request.text()).get('scope') ?? '';
      return Response.json({ access_token: `token-${requests}`, token_type: 'Bearer', expires_in: 3600, scope });
    };
    const client = new PushClient({
      clientId: 'id',
      clientSecret: 'secret',
      authUrl: 'https://auth.push.test',
      baseUrl: 'https://api.push.test',
      scopeBase: 'https://api.push.test',
      fetch,
      env: {},
    });
    for (let i = 0; i <= MAX; i++) await client.tokens.getToken({ scopes: [`scope-${i}`] });
    expect(requests).toBe(MAX + 1);
    await client.tokens.getToken({ scopes: [`scope-${MAX}`] });
    expect(requests).toBe(MAX + 1);
    await client.tokens.getToken({ scopes: ['scope-0'] });
    expect(requests).toBe(MAX + 2);
  });
});
