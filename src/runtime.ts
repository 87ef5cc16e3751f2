/** Which JavaScript runtime the client runs in, for the User-Agent. */

interface RuntimeGlobals {
  Bun?: { version?: unknown };
  Deno?: { version?: { deno?: unknown } };
  EdgeRuntime?: unknown;
  navigator?: { userAgent?: unknown };
  process?: { versions?: { node?: unknown } };
}

/**
 * `node/<version>`, `bun/<version>`, `deno/<version>`, `workerd` or `edge`. Bun and Deno also
 * set `process.versions.node` (the Node version they emulate), so they are asked first.
 * Workers give no version of their own; edge-runtime (Vercel) sets the `EdgeRuntime` global.
 */
export function runtimeProduct(): string {
  const g = globalThis as RuntimeGlobals;
  if (typeof g.Bun?.version === 'string') return `bun/${g.Bun.version}`;
  if (typeof g.Deno?.version?.deno === 'string') return `deno/${g.Deno.version.deno}`;
  if (typeof g.EdgeRuntime === 'string') return 'edge';
  if (g.navigator?.userAgent === 'Cloudflare-Workers') return 'workerd';
  if (typeof g.process?.versions?.node === 'string') return `node/${g.process.versions.node}`;
  return 'unknown';
}
