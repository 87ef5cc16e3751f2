/**
 * The CLI against an emulator served over https with a self-signed certificate: refused before
 * sending, with a line that says what to do; trusted once NODE_EXTRA_CA_CERTS names the file.
 */
import { writeFileSync } from 'node:fs';
import { DEMO_APP_ID } from 'push-api-client/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { useCliFixture } from '../support/cli/emulator.js';
import { CSV_HEADER, csvRows, emulatorEnv, runCli } from '../support/cli/run.js';
import { selfSignedCertificate, startTlsFront, type TestCertificate, type TlsFront } from '../support/tls.js';

const fixture = useCliFixture();
let certificate: TestCertificate;
let tls: TlsFront | undefined;

beforeAll(() => {
  certificate = selfSignedCertificate();
});
afterAll(() => certificate.remove());
afterEach(async () => {
  await tls?.close();
  tls = undefined;
});

async function publishOverTls(extraEnv: Record<string, string>) {
  const { emulator, temp } = fixture;
  tls = await startTlsFront(Number(new URL(emulator.url).port), { key: certificate.key, cert: certificate.cert });
  const csv = temp.path('rows.csv');
  writeFileSync(csv, `${CSV_HEADER}\n${csvRows(3)}\n`);
  const env = emulatorEnv(emulator);
  const front = tls.url;
  return runCli(fixture.cli, ['finance', 'publish', '--app', DEMO_APP_ID, csv], {
    env: {
      ...env,
      PUSH_AUTH_URL: env.PUSH_AUTH_URL?.replace(emulator.url, front),
      PUSH_BASE_URL: front,
      ...extraEnv,
    },
    timeoutMs: 30_000,
  });
}

describe('a self-signed certificate, through the CLI', () => {
  it('stops before sending and names NODE_EXTRA_CA_CERTS', async () => {
    const result = await publishOverTls({});
    expect(result.stderr).toContain(
      '(DEPTH_ZERO_SELF_SIGNED_CERT): its TLS certificate is not signed by an authority this machine trusts; for a private CA, set NODE_EXTRA_CA_CERTS to its PEM file',
    );
    expect(result.code).toBe(1);
    expect(fixture.emulator.mock.state.requests).toHaveLength(0);
  });

  it('is trusted with NODE_EXTRA_CA_CERTS: every row sent, once', async () => {
    const result = await publishOverTls({ NODE_EXTRA_CA_CERTS: certificate.certFile });
    // Nothing on stderr but the progress line a run longer than its interval prints (a loaded machine).
    const otherLines = result.stderr.split('\n').filter((line) => line !== '' && !/^publish: \d+ sent, /.test(line));
    expect(otherLines).toEqual([]);
    expect(result.code).toBe(0);
    expect(fixture.emulator.mock.state.records(DEMO_APP_ID)).toHaveLength(3);
    expect(tls?.handshakes).toBeGreaterThan(0);
  });
});
