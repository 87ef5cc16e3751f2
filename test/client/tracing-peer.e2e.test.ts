/** Without the optional peer @opentelemetry/api, tracing: true fails at construction, naming it. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

describe('tracing without @opentelemetry/api', () => {
  it('new PushClient({ tracing: true }) throws a ConfigurationError naming the peer; without tracing it constructs', async () => {
    const { stdout } = await run(
      process.execPath,
      [
        '--require',
        './test/support/without-opentelemetry.cjs',
        '--import',
        'tsx',
        'test/client/fixtures/tracing-without-peer.ts',
      ],
      { cwd: root, timeout: 30_000 },
    );
    const result = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as { name?: string; message?: string };
    expect(result.name).toBe('ConfigurationError');
    expect(result.message).toContain('@opentelemetry/api');
  }, 40_000);
});
