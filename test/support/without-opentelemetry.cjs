/**
 * Preloaded with `node --require` into a test's child process: from then on, `@opentelemetry/api`
 * cannot be resolved by require(), as in an app that did not install the optional peer.
 */
const Module = require('node:module');

const resolve = Module._resolveFilename;
Module._resolveFilename = function resolveWithoutOpenTelemetry(request, ...rest) {
  if (request === '@opentelemetry/api' || request.startsWith('@opentelemetry/api/')) {
    const error = new Error(`Cannot find module '${request}' (blocked in this process)`);
    error.code = 'MODULE_NOT_FOUND';
    throw error;
  }
  return resolve.call(this, request, ...rest);
};
