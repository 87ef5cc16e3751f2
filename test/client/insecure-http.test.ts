import { ConfigurationError, PushClient } from 'push-api-client';
import { startEmulator } from 'push-api-client/testing';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { containerLookup } from '../support/container-lookup.js';
import { closedPort } from '../support/loopback-server.js';
import { financeRecord } from '../support/records.js';

const remote = {
  clientId: 'id',
  clientSecret: 'sek-9d1f',
  authUrl: 'http://emulator:4010/auth',
  baseUrl: 'http://emulator:4010',
  scopeBase: 'https://api.push.test',
};

/** Collects the process warnings emitted while `run` runs (they are emitted on the next tick). */
async function warningsDuring(run: () => Promise<void> | void): Promise<Error[]> {
  const seen: Error[] = [];
  const listener = (warning: Error) => seen.push(warning);
  process.on('warning', listener);
  try {
    await run();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', listener);
  }
  return seen.filter((warning) => (warning as { code?: string }).code === 'PUSH_API_INSECURE_HTTP');
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe('plain http to a non-loopback host', () => {
  it('is refused without the switch, naming the switch', () => {
    expect(() => new PushClient({ ...remote, env: {} })).toThrow(ConfigurationError);
    expect(() => new PushClient({ ...remote, env: {} })).toThrow(/PUSH_ALLOW_INSECURE_HTTP=1/);
  });

  it('is allowed by PUSH_ALLOW_INSECURE_HTTP=1, with one SecurityWarning naming the host', async () => {
    const warnings = await warningsDuring(() => {
      new PushClient({ ...remote, env: { PUSH_ALLOW_INSECURE_HTTP: '1' } });
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.name).toBe('SecurityWarning');
    expect(warnings[0]!.message).toContain('emulator:4010');
    expect(warnings[0]!.message).not.toContain('sek-9d1f');
  });

  it('is allowed by the allowInsecureHttp option, which wins over the environment', async () => {
    expect(
      () => new PushClient({ ...remote, allowInsecureHttp: false, env: { PUSH_ALLOW_INSECURE_HTTP: '1' } }),
    ).toThrow(ConfigurationError);
    const warnings = await warningsDuring(() => {
      new PushClient({ ...remote, allowInsecureHttp: true, env: {} });
    });
    expect(warnings).toHaveLength(1);
  });

  it('refuses a PUSH_ALLOW_INSECURE_HTTP value other than 1 or 0', () => {
    for (const value of ['yes', 'true', '2']) {
      expect(() => new PushClient({ ...remote, env: { PUSH_ALLOW_INSECURE_HTTP: value } })).toThrow(
        /PUSH_ALLOW_INSECURE_HTTP must be 1/,
      );
    }
    expect(() => new PushClient({ ...remote, env: { PUSH_ALLOW_INSECURE_HTTP: '0' } })).toThrow(ConfigurationError);
  });

  it('does not warn when the switch lets nothing through (https, or loopback http)', async () => {
    const warnings = await warningsDuring(() => {
      new PushClient({
        ...remote,
        authUrl: 'https://auth.example',
        baseUrl: 'http://127.0.0.1:4010',
        allowInsecureHttp: true,
      });
    });
    expect(warnings).toEqual([]);
  });

  it('reaches an emulator in "another container": bound on 127.0.0.2, named emulator, through the switch', async () => {
    const port = await closedPort('127.0.0.2');
    const emulator = await startEmulator({ host: '127.0.0.2', port, publicUrl: `http://emulator:${port}` });
    const dispatcher = new Agent({ connect: { lookup: containerLookup('emulator', '127.0.0.2') } });
    closers.push(
      () => emulator.close(),
      () => dispatcher.close(),
    );

    let client: PushClient | undefined;
    const warnings = await warningsDuring(async () => {
      client = new PushClient({ ...emulator.clientOptions(), dispatcher, env: { PUSH_ALLOW_INSECURE_HTTP: '1' } });
      await client.finance.publish(emulator.mock.appId, [financeRecord(), financeRecord()]);
      await client.uploads.upload(emulator.mock.appId, [{ name: 'users.csv', data: 'id\n1\n' }]);
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toContain(`emulator:${port}`);
    expect(emulator.mock.state.recordCount(emulator.mock.appId)).toBe(2);
    expect(emulator.mock.state.file(emulator.mock.appId, 'users.csv')?.size).toBe(5);
    // Every request came by the container name, which the emulator was started to accept.
    expect(new Set(emulator.mock.state.requests.map((entry) => entry.headers.host))).toEqual(
      new Set([`emulator:${port}`]),
    );
  });
});
