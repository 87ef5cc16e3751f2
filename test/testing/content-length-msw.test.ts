/**
 * Under msw a PUT never crosses a socket, so the emulator judges the body the way the runtime
 * would send it: a stream without Content-Length goes chunked, which object stores refuse.
 */
import { setupServer } from 'msw/node';
import { createPushApiHandler } from 'push-api-client/testing';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyIsStream } from '../../src/testing/body-length.js';
import { getToken, signedUrls } from '../support/emulator-requests.js';

const strict = createPushApiMock();
const lenient = createPushApiMock({ apps: ['lenient-app'], requireContentLength: false });
const server = setupServer(...strict.handlers);

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterAll(() => server.close());

function streamOf(text: string): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(text));
      controller.close();
    },
  });
}

async function addressFor(mock: typeof strict, name: string): Promise<string> {
  return (await signedUrls(mock, await getToken(mock), [name]))[name]!;
}

/**
 * Whether this runtime's Request says what its body was made from. Node 20/22 and Deno do; Node 24's
 * undici keeps that state private, and there a stream body passes, as the docs say.
 */
const runtimeTellsStreams =
  bodyIsStream(new Request('http://x.test/', { method: 'PUT', body: streamOf('x'), duplex: 'half' } as RequestInit)) ===
  true;
const STREAM_STATUS = runtimeTellsStreams ? 501 : 200;

function put(url: string, body: BodyInit, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'PUT', body, headers, duplex: 'half' } as RequestInit);
}

describe('Content-Length on PUTs without a socket', () => {
  it('answers 501 NotImplemented to a stream body without Content-Length under msw, as over HTTP', async () => {
    const response = await put(await addressFor(strict, 'a.csv'), streamOf('a,b\n'));
    expect(response.status).toBe(STREAM_STATUS);
    if (runtimeTellsStreams) {
      expect(await response.text()).toContain('<Code>NotImplemented</Code>');
      expect(strict.state.file(strict.appId, 'a.csv')).toBeUndefined();
    } else {
      expect(strict.state.file(strict.appId, 'a.csv')?.size).toBe(4);
    }
  });

  it.each([
    ['bytes', () => new TextEncoder().encode('a,b\n')],
    ['a string', () => 'a,b\n'],
    ['a Blob', () => new Blob(['a,b\n'])],
  ])('stores %s, whose length the runtime sends', async (_, body) => {
    expect((await put(await addressFor(strict, 'b.csv'), body())).status).toBe(200);
    expect(strict.state.file(strict.appId, 'b.csv')?.size).toBe(4);
  });

  it('stores a stream body that declares its Content-Length', async () => {
    const response = await put(await addressFor(strict, 'c.csv'), streamOf('a,b\n'), { 'content-length': '4' });
    expect(response.status).toBe(200);
  });

  it('accepts a stream body without Content-Length with requireContentLength: false', async () => {
    const response = await lenient.fetch(await addressFor(lenient, 'd.csv'), {
      method: 'PUT',
      body: streamOf('a,b\n'),
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(200);
    expect(lenient.state.file(lenient.appId, 'd.csv')?.size).toBe(4);
  });

  it('applies the same rule to the core handler', async () => {
    const emulator = createPushApiHandler();
    const address = (await signedUrls(emulator, await getToken(emulator), ['e.csv']))['e.csv']!;
    const request = new Request(address, { method: 'PUT', body: streamOf('x'), duplex: 'half' } as RequestInit);
    expect((await emulator.handle(request)).status).toBe(STREAM_STATUS);
  });
});
