import { runInNewContext } from 'node:vm';
import { describe, expect, it, vi } from 'vitest';
import * as errors from '../../src/errors.js';

/**
 * A process that loads the package twice (its ESM build through `import`, its CJS build through
 * `require`) has two copies of every error class. A second instance of the module stands in for
 * the other build: its classes are distinct objects, as the other build's are.
 */
async function otherBuild(): Promise<typeof errors> {
  vi.resetModules();
  const other = await import('../../src/errors.js');
  expect(other.PushError).not.toBe(errors.PushError);
  return other;
}

describe('errors across the builds of the package', () => {
  it("an error thrown by the other build is an instance of this build's class and of its ancestors", async () => {
    const other = await otherBuild();
    const notFound = new other.NotFoundError(404, { message: 'unknown app' }, {});
    expect(notFound instanceof errors.NotFoundError).toBe(true);
    expect(notFound instanceof errors.PushApiError).toBe(true);
    expect(notFound instanceof errors.PushError).toBe(true);
    expect(notFound instanceof Error).toBe(true);
    const stopped = new other.PublishStoppedError(
      {
        recordsRead: 1,
        recordsSent: 0,
        recordsInvalid: 0,
        recordsFailed: 1,
        recordsUnknown: 0,
        recordsNotRead: 0,
        batchesSent: 0,
        batchesFailed: 1,
        batchesUnknown: 0,
        invalid: [],
        batches: [],
        durationMs: 1,
      },
      notFound,
    );
    expect(stopped instanceof errors.PublishStoppedError).toBe(true);
    expect(stopped.cause instanceof errors.NotFoundError).toBe(true);
    expect(new other.TimeoutError('slow') instanceof errors.ConnectionError).toBe(true);
    // And the other way round.
    expect(new errors.AbortError('aborted') instanceof other.AbortError).toBe(true);
  });

  it('is no instance of a sibling or a subclass of its class', async () => {
    const other = await otherBuild();
    const notFound = new other.NotFoundError(404, undefined, {});
    expect(notFound instanceof errors.ServerError).toBe(false);
    expect(notFound instanceof errors.TokenError).toBe(false);
    expect(new other.ConnectionError('reset', { requestMaybeSent: true }) instanceof errors.TimeoutError).toBe(false);
    expect(new other.PushError('base') instanceof errors.PushApiError).toBe(false);
    for (const value of [new Error('plain'), new TypeError('x'), { name: 'NotFoundError' }, null, undefined, 'e', 1]) {
      expect(value instanceof errors.PushError).toBe(false);
    }
    // An object that only claims the name is not one.
    const claiming = Object.assign(new Error('x'), { name: 'NotFoundError', status: 404 });
    expect(claiming instanceof errors.NotFoundError).toBe(false);
  });

  it("a user's subclass of either build is a PushError of both, and keeps the plain rule for itself", async () => {
    const other = await otherBuild();
    class QueueError extends other.PushError {}
    class AppError extends errors.PushError {}
    expect(new QueueError('x') instanceof errors.PushError).toBe(true);
    expect(new AppError('x') instanceof other.PushError).toBe(true);
    expect(new AppError('x') instanceof QueueError).toBe(false);
    expect(new errors.PushError('x') instanceof AppError).toBe(false);
    expect(new QueueError('x') instanceof AppError).toBe(false);
  });

  it('runs no getter of the value tested, and throws no more than the plain rule', () => {
    let ran = 0;
    const prototype = {
      get constructor() {
        ran++;
        throw new Error('a getter of the value tested ran');
      },
    };
    const value = Object.create(prototype) as object;
    expect(value instanceof errors.PushError).toBe(false);
    expect(value instanceof errors.NotFoundError).toBe(false);
    // A class whose registered name is a getter is read without running it either.
    class Claiming extends Error {}
    Object.defineProperty(Claiming, Symbol.for('push-api-client.error-class'), {
      get() {
        ran++;
        return 'PushError';
      },
    });
    expect(new Claiming('x') instanceof errors.PushError).toBe(false);
    expect(ran).toBe(0);
  });

  it("is no instance for another realm's error, a Proxy of a plain object, or a user's class named like ours", () => {
    const foreign: unknown = runInNewContext('new TypeError("other realm")');
    expect(foreign instanceof errors.PushError).toBe(false);
    expect(new Proxy({}, {}) instanceof errors.PushError).toBe(false);
    // A Proxy of one of ours is one, as under the plain rule.
    expect(new Proxy(new errors.AbortError('x'), {}) instanceof errors.PushError).toBe(true);
    const NotFoundError = class NotFoundError extends Error {};
    expect(new NotFoundError('x') instanceof errors.NotFoundError).toBe(false);
  });
});
