// The testing kit inside Bun and Deno: createPushApiHandler answering Requests directly, and the
// msw adapter intercepting the client's fetch. Asserts on the in-process emulator's state.
import { setupServer } from 'msw/node';
import { PushClient } from 'push-api-client';
import { createPushApiHandler } from 'push-api-client/testing';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { MEMORY_FILE, makeRecords, patternBytes } from './shared.mjs';

function check(condition, what) {
  if (!condition) throw new Error(`testing kit: ${what}`);
}

const handler = createPushApiHandler();
const tokenResponse = await handler.handle(
  new Request(`${handler.authUrl}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: handler.clientId,
      client_secret: handler.clientSecret,
      scope: `${handler.scopeBase}/connector.write`,
    }),
  }),
);
check(tokenResponse.status === 200, `createPushApiHandler answered the token request ${tokenResponse.status}`);

const mock = createPushApiMock();
const server = setupServer(...mock.handlers);
server.listen({ onUnhandledRequest: 'error' });
try {
  const client = new PushClient({
    clientId: mock.clientId,
    clientSecret: mock.clientSecret,
    authUrl: mock.authUrl,
    baseUrl: mock.baseUrl,
    scopeBase: mock.scopeBase,
    env: {},
  });
  const data = patternBytes(MEMORY_FILE.size, MEMORY_FILE.seed);
  const upload = await client.uploads.upload(mock.appId, [{ name: MEMORY_FILE.name, data }]);
  check(upload.filesUploaded === 1, 'the msw upload failed');
  check(mock.state.file(mock.appId, MEMORY_FILE.name)?.size === MEMORY_FILE.size, 'the stored file has another size');
  const report = await client.finance.publish(mock.appId, makeRecords(100));
  check(report.recordsSent === 100 && mock.state.recordCount(mock.appId) === 100, 'msw publish count');
} finally {
  server.close();
}
console.log(JSON.stringify({ handler: true, msw: true }));
// msw opens a BroadcastChannel when imported and unrefs it only where it can (Node, Bun): on Deno
// it keeps the process alive after the work is done.
if (globalThis.Deno) Deno.exit(0);
