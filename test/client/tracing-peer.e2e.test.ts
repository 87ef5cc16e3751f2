/**
 * Without the optional peer @opentelemetry/api, `new PushClient({ tracing: true })` throws a
 * ConfigurationError naming it, synchronously, from the source and from an ESM and a CJS bundle
 * built as the package's own (every package external, so the peer is loaded, never bundled).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
// Inside the repository, so that the bundles resolve packages from its node_modules.
const out = join(root, '.tmp', `tracing-peer-${process.pid}`);

beforeAll(async () => {
  mkdirSync(out, { recursive: true });
  for (const format of ['esm', 'cjs'] as const) {
    await build({
      entryPoints: [join(root, 'src/index.ts')],
      outfile: join(out, format === 'esm' ? 'index.mjs' : 'index.cjs'),
      bundle: true,
      format,
      platform: 'node',
      target: 'node20',
      packages: 'external',
      logLevel: 'silent',
    });
  }
}, 60_000);

afterAll(() => rmSync(out, { recursive: true, force: true }));

const OPTIONS = `{
  clientId: 'demo-client', clientSecret: 'demo-secret-do-not-use-in-production',
  authUrl: 'https://auth.push.test', baseUrl: 'https://api.push.test', scopeBase: 'https://api.push.test',
}`;

/** Constructs without tracing (which must work), then with it; prints what the second did. */
function probe(load: string): string {
  return `${load}
new PushClient(${OPTIONS});
try {
  new PushClient({ ...${OPTIONS}, tracing: true });
  console.log(JSON.stringify({ constructed: true }));
} catch (error) {
  console.log(JSON.stringify({ name: error.name, message: error.message, sync: true }));
}`;
}

async function withoutPeer(args: string[]): Promise<{ name?: string; message?: string; constructed?: boolean }> {
  const { stdout } = await run(
    process.execPath,
    ['--require', join(root, 'test/support/without-opentelemetry.cjs'), ...args],
    { cwd: root, timeout: 30_000 },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}');
}

describe('tracing without @opentelemetry/api', () => {
  it('from the source: a ConfigurationError naming the peer; without tracing it constructs', async () => {
    const result = await withoutPeer(['--import', 'tsx', 'test/client/fixtures/tracing-without-peer.ts']);
    expect(result.name).toBe('ConfigurationError');
    expect(result.message).toContain('@opentelemetry/api');
  }, 40_000);

  it('from an ESM bundle, synchronously from the constructor', async () => {
    const script = probe(`import { PushClient } from ${JSON.stringify(join(out, 'index.mjs'))};`);
    const result = await withoutPeer(['--input-type=module', '--eval', script]);
    expect(result).toMatchObject({ name: 'ConfigurationError', sync: true });
    expect(result.message).toContain('@opentelemetry/api');
  }, 40_000);

  it('from a CJS bundle, synchronously from the constructor', async () => {
    const script = probe(`const { PushClient } = require(${JSON.stringify(join(out, 'index.cjs'))});`);
    const result = await withoutPeer(['--eval', script]);
    expect(result).toMatchObject({ name: 'ConfigurationError', sync: true });
    expect(result.message).toContain('@opentelemetry/api');
  }, 40_000);

  it('with the peer installed, both bundles construct with tracing: true', async () => {
    for (const [args, load] of [
      [['--input-type=module'], `import { PushClient } from ${JSON.stringify(join(out, 'index.mjs'))};`],
      [[], `const { PushClient } = require(${JSON.stringify(join(out, 'index.cjs'))});`],
    ] as const) {
      const { stdout } = await run(process.execPath, [...args, '--eval', probe(load)], { cwd: root, timeout: 30_000 });
      expect(JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}')).toEqual({ constructed: true });
    }
  }, 40_000);
});
