/**
 * `push-api emulator --client-secret-file` names a FIFO: one planted where a developer keeps the
 * file, or a pipe from a vault (`<(vault read …)`). A FIFO nobody writes to must not hold the
 * process past a signal, and a pipe with a writer gives the secret.
 */
import { execFileSync, spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { expectSigtermEndsFifoWait, useBuiltCli } from '../support/cli/emulator.js';
import { killChildren, startCli } from '../support/cli/run.js';

const ctx = useBuiltCli();
afterAll(killChildren);

describe('push-api emulator --client-secret-file', () => {
  it('a FIFO nobody writes to: the emulator waits, and SIGTERM still ends it with exit 130', async () => {
    await expectSigtermEndsFifoWait(ctx, (fifo) => ['emulator', '--port', '0', '--client-secret-file', fifo]);
  });

  it('a pipe with a writer: the first line is the secret a token request needs', async () => {
    const fifo = ctx.temp.path('vault-fifo');
    execFileSync('mkfifo', [fifo]);
    const secret = 'piped-secret-4f1c';
    const writer = spawn('sh', ['-c', `sleep 0.3; printf '%s\\nsecond line\\n' "$SECRET" > "${fifo}"`], {
      env: { ...process.env, SECRET: secret },
    });
    const { child, done } = startCli(ctx.cli, ['emulator', '--port', '0', '--json', '--client-secret-file', fifo], {
      timeoutMs: 20_000,
    });
    try {
      const settings = await new Promise<{ authUrl: string; clientId: string; clientSecret: unknown }>(
        (resolve, reject) => {
          let text = '';
          child.stdout?.on('data', (chunk: Buffer) => {
            text += chunk.toString();
            if (text.includes('\n')) resolve(JSON.parse(text.slice(0, text.indexOf('\n'))));
          });
          child.once('close', () => reject(new Error('the emulator stopped before printing its settings')));
        },
      );
      expect(settings.clientSecret).toBeNull();
      const token = await fetch(`${settings.authUrl}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: settings.clientId,
          client_secret: secret,
          scope: 'https://api.push.test/connector.write',
        }),
      });
      expect(token.status).toBe(200);
    } finally {
      writer.kill();
      child.kill('SIGTERM');
    }
    const result = await done;
    expect(result.code).toBe(0);
    expect(result.stdout + result.stderr).not.toContain(secret);
  });
});
