// A project without msw (the testing kit's optional peer dependency): `push-api-client/testing`
// must load, type-check (skipLibCheck off, no DOM library) and serve tokens without it.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { PushClient } from 'push-api-client';
import { createPushApiHandler, type RunningEmulator, startEmulator } from 'push-api-client/testing';

const require = createRequire(import.meta.url);
assert.throws(() => require.resolve('msw'), /Cannot find module/, 'this project must not have msw installed');

const emulator: RunningEmulator = await startEmulator();
try {
  const client = new PushClient({
    clientId: emulator.mock.clientId,
    clientSecret: emulator.mock.clientSecret,
    authUrl: emulator.authUrl,
    baseUrl: emulator.baseUrl,
    scopeBase: emulator.mock.scopeBase,
  });
  const token = await client.tokens.getToken();
  assert.ok(token.expiresAt.getTime() > Date.now());
  assert.equal(emulator.mock.state.tokens.length, 1);
} finally {
  await emulator.close();
}

const handler = createPushApiHandler();
const inMemory = new PushClient({
  clientId: handler.clientId,
  clientSecret: handler.clientSecret,
  authUrl: handler.authUrl,
  baseUrl: handler.baseUrl,
  scopeBase: handler.scopeBase,
  fetch: handler.fetch,
});
await inMemory.tokens.getToken();
assert.equal(handler.state.tokenRequestCount, 1);

// The CommonJS build loads without msw too.
const cjs = require('push-api-client/testing') as typeof import('push-api-client/testing');
assert.equal(typeof cjs.startEmulator, 'function');
console.log('no-msw consumer: ok');
