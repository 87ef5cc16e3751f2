/**
 * `push-api token` against a token endpoint that answers an absurd lifetime: the CLI prints a sane
 * expiry (the SDK's 24-hour cap) instead of crashing on an Invalid Date.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../support/cli/build.js';
import { killChildren, runCli } from '../support/cli/run.js';
import { HOSTILE_CLIENT_ID, HOSTILE_SECRET, HOSTILE_TOKEN, useHostileService } from '../support/hostile-service.js';

const start = useHostileService();
let cli: string;

beforeAll(async () => {
  cli = await buildCli();
}, 60_000);
afterEach(killChildren);

describe('push-api token against a hostile token endpoint', () => {
  it.each(['1e300', '1e400'])('reports a capped expiry for expires_in %s', async (expiresIn) => {
    const service = await start(({ route }, res) => {
      if (route !== 'token') return false;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"access_token":"${HOSTILE_TOKEN}","token_type":"Bearer","expires_in":${expiresIn}}`);
      return true;
    });
    const before = Date.now();
    const result = await runCli(cli, ['token', '--json'], {
      env: {
        PUSH_CLIENT_ID: HOSTILE_CLIENT_ID,
        PUSH_CLIENT_SECRET: HOSTILE_SECRET,
        PUSH_AUTH_URL: service.url,
        PUSH_BASE_URL: service.url,
        PUSH_SCOPE_BASE: 'https://api.push.test',
      },
    });
    expect(result.stderr).not.toMatch(/RangeError|Invalid Date/);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as { ok: boolean; expiresAt: string };
    expect(report.ok).toBe(true);
    const expiresAt = Date.parse(report.expiresAt);
    expect(expiresAt).toBeGreaterThan(before);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 24 * 3600 * 1000);
    expect(result.stdout + result.stderr).not.toContain(HOSTILE_TOKEN);
    expect(service.on('token')).toHaveLength(1);
  });
});
