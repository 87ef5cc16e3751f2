/**
 * The bundle budget of a Cloudflare Worker that imports PushClient and publishes records, built as
 * wrangler builds it (esbuild, minified, neutral platform, the workerd conditions), from the built
 * package (`npm run build` first). Fails above the budget, or when the bundle reaches a Node
 * built-in or undici, which a Worker without nodejs_compat cannot load.
 *
 *   tsx scripts/check-worker-bundle.ts [--json <file>]
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';

/**
 * What the guard is for: a Node built-in, undici or a whole library pulled into a Worker (the
 * first web build bundled 1.9 MB) shows as a jump of tens of kB. The package's own code grows a
 * little with each fix; the budget moved from 150 to 160 kB when it reached 150.4 kB.
 */
const BUDGET_BYTES = 160 * 1000;
const ROOT = path.resolve(import.meta.dirname, '..');

/** The Worker a user would write: a client from its env, one publish per request. */
const WORKER = `
import { PushClient } from 'push-api-client';
export default {
  async fetch(request, env) {
    const client = new PushClient({ clientId: env.PUSH_CLIENT_ID, clientSecret: env.PUSH_CLIENT_SECRET,
      authUrl: env.PUSH_AUTH_URL, baseUrl: env.PUSH_BASE_URL, scopeBase: env.PUSH_SCOPE_BASE, env: {} });
    const report = await client.finance.publish(env.PUSH_APP_ID, await request.json());
    return Response.json(report);
  },
};
`;

/** The Worker's project: the package installed as a dependency (a link), so that its `exports` apply. */
function workerProject(): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'push-worker-bundle-'));
  mkdirSync(path.join(dir, 'node_modules'));
  symlinkSync(ROOT, path.join(dir, 'node_modules', 'push-api-client'), 'dir');
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

async function main(): Promise<number> {
  const project = workerProject();
  const result = await build({
    stdin: { contents: WORKER, resolveDir: project.dir, sourcefile: 'worker.js', loader: 'js' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'neutral',
    // What wrangler asks of packages: https://developers.cloudflare.com/workers/wrangler/bundling/
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['workerd', 'worker', 'browser', 'module', 'main'],
    target: 'es2022',
    write: false,
    metafile: true,
    logLevel: 'silent',
  }).finally(project.cleanup);
  const bytes = result.outputFiles[0]?.contents.byteLength ?? 0;
  const inputs = Object.entries(result.metafile.outputs)[0]?.[1].inputs ?? {};
  const largest = Object.entries(inputs)
    .sort(([, a], [, b]) => b.bytesInOutput - a.bytesInOutput)
    .slice(0, 6)
    .map(([file, info]) => `  ${(info.bytesInOutput / 1000).toFixed(1).padStart(7)} kB  ${file}`);
  const forbidden = Object.keys(inputs).filter((file) => /(^|\/)node_modules\/undici\//.test(file));
  const nodeImports = (result.metafile.outputs[Object.keys(result.metafile.outputs)[0] ?? '']?.imports ?? [])
    .map((entry) => entry.path)
    .filter((name) => name.startsWith('node:') || name === 'fs' || name === 'path');
  console.log(`Worker bundle: ${(bytes / 1000).toFixed(1)} kB minified (budget ${BUDGET_BYTES / 1000} kB)`);
  console.log(largest.join('\n'));
  const jsonAt = process.argv.indexOf('--json');
  if (jsonAt !== -1 && process.argv[jsonAt + 1]) {
    writeFileSync(process.argv[jsonAt + 1] as string, `${JSON.stringify({ bytes, budgetBytes: BUDGET_BYTES })}\n`);
  }
  let failed = false;
  if (bytes > BUDGET_BYTES) {
    console.error(`FAIL: the Worker bundle is over its budget by ${((bytes - BUDGET_BYTES) / 1000).toFixed(1)} kB`);
    failed = true;
  }
  if (forbidden.length > 0 || nodeImports.length > 0) {
    console.error(`FAIL: the Worker bundle reaches ${[...forbidden, ...nodeImports].join(', ')}`);
    failed = true;
  }
  return failed ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
