// Plain CommonJS consumer: `require` from the installed tarball, token + upload + publish against the emulator.
const assert = require('node:assert/strict');
const { NotFoundError, PublishStoppedError, PushClient, RecordValidationError } = require('push-api-client');
const { startEmulator } = require('push-api-client/testing');

// zod is loaded on first need only (by import(), so it never shows in require.cache): the client entry must not require it.
const zodLoaded = () => Object.keys(require.cache).some((file) => /[\\/]node_modules[\\/]zod[\\/]/.test(file));
assert.equal(zodLoaded(), false, 'requiring push-api-client loaded zod');

async function main() {
  const emulator = await startEmulator();
  try {
    const { mock } = emulator;
    const client = new PushClient({
      clientId: mock.clientId,
      clientSecret: mock.clientSecret,
      authUrl: emulator.authUrl,
      baseUrl: emulator.baseUrl,
      scopeBase: mock.scopeBase,
    });
    const token = await client.tokens.getToken();
    assert.equal(token.tokenType.toLowerCase(), 'bearer');

    const upload = await client.uploads.upload(mock.appId, [{ name: 'users.csv', data: 'email\nada@example.com\n' }]);
    assert.equal(upload.filesUploaded, 1);

    const records = Array.from({ length: 1500 }, (_, i) => ({
      created: new Date(Date.UTC(2025, 0, 1) + i * 60_000),
      amount: 10 + i,
      currency: 'EUR',
      identifier: `user${i}@example.com`,
      type: 'invoice',
      vendor: 'Globex',
    }));
    const report = await client.finance.publish(mock.appId, records);
    assert.equal(report.recordsSent, 1500);
    assert.equal(mock.state.recordCount(mock.appId), 1500);
    assert.equal(mock.state.tokenRequestCount, 1);

    await assert.rejects(client.finance.publish(mock.appId, [{ amount: 1 }]), RecordValidationError);

    // The ESM build loaded beside this one (a dependency that imports it): its errors are still this build's classes.
    const esm = await import('push-api-client');
    assert.notEqual(esm.PushError, require('push-api-client').PushError);
    const esmClient = new esm.PushClient(emulator.clientOptions());
    await assert.rejects(
      esmClient.finance.publish('no-such-app', records.slice(0, 1)),
      (error) => error instanceof PublishStoppedError && error.cause instanceof NotFoundError,
    );

    const { financeRecordSchema } = require('push-api-client/schema');
    assert.equal(financeRecordSchema.safeParse(records[0]).success, true);
    assert.equal(financeRecordSchema.safeParse({ ...records[0], merchant: 'Globex' }).success, false);
    console.log(`cjs: ok on node ${process.version}`);
  } finally {
    await emulator.close();
  }
}

// Jest runs CommonJS through node:vm, where import() fails unless Node has
// --experimental-vm-modules: the CJS build must load zod (and undici) with require().
async function underVm() {
  const vm = require('node:vm');
  const fs = require('node:fs');
  const Module = require('node:module');
  const file = require.resolve('push-api-client');
  const factory = vm.compileFunction(fs.readFileSync(file, 'utf8'), [
    'exports',
    'require',
    'module',
    '__filename',
    '__dirname',
  ]);
  const loaded = { exports: {} };
  factory(loaded.exports, Module.createRequire(file), loaded, file, require('node:path').dirname(file));
  const { startEmulator } = require('push-api-client/testing');
  const emulator = await startEmulator();
  try {
    const { mock } = emulator;
    const client = new loaded.exports.PushClient({
      clientId: mock.clientId,
      clientSecret: mock.clientSecret,
      authUrl: emulator.authUrl,
      baseUrl: emulator.baseUrl,
      scopeBase: mock.scopeBase,
    });
    const record = {
      created: Date.UTC(2025, 0, 1),
      amount: 1,
      currency: 'USD',
      identifier: 'a',
      type: 'expense',
      vendor: 'v',
    };
    const error = await client.finance
      .publish(mock.appId, [record, { ...record, amount: 'ten' }])
      .catch((thrown) => thrown);
    assert.ok(error instanceof loaded.exports.RecordValidationError, `expected RecordValidationError, got ${error}`);
    assert.deepEqual(error.invalid, [{ index: 1, issues: [{ path: 'amount', message: 'expected a finite number' }] }]);
    console.log(`cjs under node:vm: ok on node ${process.version}`);
  } finally {
    await emulator.close();
  }
}

main()
  .then(underVm)
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
