// Jest's default CommonJS mode cannot load ESM-only packages inside a test (the testing kit's HTTP
// server, srvx, and msw's dependency rettime), while the SDK loads. So the emulator runs here, in
// plain Node outside the test sandbox, and the tests reach it over HTTP with nothing but the SDK.
// Its addresses travel in the PUSH_* variables.
const { startEmulator } = require('push-api-client/testing');

module.exports = async function globalSetup() {
  const emulator = await startEmulator();
  globalThis.__pushEmulator = emulator;
  Object.assign(process.env, {
    PUSH_AUTH_URL: emulator.authUrl,
    PUSH_BASE_URL: emulator.baseUrl,
    PUSH_SCOPE_BASE: emulator.mock.scopeBase,
    PUSH_CLIENT_ID: emulator.mock.clientId,
    PUSH_CLIENT_SECRET: emulator.mock.clientSecret,
    PUSH_APP_ID: emulator.mock.appId,
  });
};
